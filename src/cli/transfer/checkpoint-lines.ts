/**
 * The `checkpoint` line of an export (format version 4): a session's checkpoint (a LangGraph thread's,
 * store/transfer/checkpoints.ts) with its bytes as base64, the channel values it is the first of the file to carry
 * (a delta names its base) and its pending writes.
 */
import type { TransferCheckpoint } from "../../contract/transfer.js";
import { Fields } from "./fields.js";

const base64 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");

/** The line of one checkpoint of `sessionId`. */
export function encodeCheckpoint(sessionId: string, c: TransferCheckpoint): string {
  return JSON.stringify({
    type: "checkpoint",
    session: sessionId,
    ns: c.ns,
    id: c.id,
    parent: c.parentId,
    checkpointType: c.type,
    data: base64(c.data),
    metadataType: c.metadataType,
    metadata: base64(c.metadata),
    versions: c.versions,
    values: c.values.map((v) => ({
      channel: v.channel,
      version: v.version,
      type: v.type,
      data: v.data === null ? null : base64(v.data),
      ...(v.base ? { base: { version: v.base.version, prefix: v.base.prefix } } : {}),
    })),
    writes: c.writes.map((w) => ({
      task: w.taskId,
      idx: w.idx,
      channel: w.channel,
      type: w.type,
      data: base64(w.data),
      path: w.taskPath,
    })),
  });
}

/** A checkpoint line's session and checkpoint (its values are checked again by the store's import). */
export function decodeCheckpoint(
  f: Fields,
  record: Record<string, unknown>,
  line: number,
): { sessionId: string; checkpoint: TransferCheckpoint } {
  const bytes = (g: Fields, name: string) => Buffer.from(g.string(name), "base64");
  const list = (name: string) => {
    const value = record[name];
    if (!Array.isArray(value)) f.fail(`"${name}" must be an array`);
    return (value as unknown[]).map((item, i) => {
      if (item === null || typeof item !== "object") f.fail(`"${name}.${i}" must be an object`);
      return new Fields(item as Record<string, unknown>, line, `${name}.${i}.`);
    });
  };
  const versions = f.object("versions") as Record<string, string | number>;
  const checkpoint: TransferCheckpoint = {
    ns: f.string("ns"),
    id: f.string("id", true),
    parentId: f.nullableString("parent"),
    type: f.string("checkpointType"),
    data: bytes(f, "data"),
    metadataType: f.string("metadataType"),
    metadata: bytes(f, "metadata"),
    versions,
    values: list("values").map((v) => {
      const data = v.nullableString("data");
      const base = v.has("base") ? v.nested("base") : undefined;
      return {
        channel: v.string("channel"),
        version: v.string("version"),
        type: v.string("type"),
        data: data === null ? null : Buffer.from(data, "base64"),
        ...(base ? { base: { version: base.string("version"), prefix: base.count("prefix") } } : {}),
      };
    }),
    writes: list("writes").map((w) => ({
      taskId: w.string("task"),
      idx: w.integer("idx"),
      channel: w.string("channel"),
      type: w.string("type"),
      data: bytes(w, "data"),
      taskPath: w.string("path"),
    })),
  };
  return { sessionId: f.string("session"), checkpoint };
}
