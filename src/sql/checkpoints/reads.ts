/**
 * The read side of checkpoints (steps.ts): the values and writes of the checkpoint rows a read found, fetched with
 * one chain read and one writes read per session and namespace, then opened and rebuilt.
 */
import type { CheckpointRead } from "../../contract/checkpoints.js";
import { SessionError } from "../../errors.js";
import { utf8Decode } from "../../runtime/bytes.js";
import type { CodecKeys } from "../../store/crypto/row-codec.js";
import type { Program, Row } from "../program.js";
import { type ChainRow, type KnownValue, rebuild, type ValueCache } from "./delta.js";
import { idOf, idOrNull } from "./ids.js";
import { unpack } from "./packing.js";
import { openedBytes, rowId } from "./sealing.js";
import type { CheckpointStatements } from "./statements.js";
import { INPUT_CHANNEL, parseValueRef, type ValueRef, withPiece } from "./value-refs.js";
import { unpackVersions } from "./versions.js";
import { parseRef, resolve } from "./write-refs.js";

/**
 * The checkpoint rows a read found, with the chain rows and writes of each (session, namespace), and the values this
 * process held when it asked (`held`, by group then channel): a chain stops at a held version's row when its tag is
 * the one held, and the held bytes stand for the chain below it.
 */
export interface Found {
  rows: Row[];
  chains: Map<string, Row[]>;
  writes: Map<string, Row[]>;
  held: Map<string, Map<string, KnownValue>>;
}

const group = (sessionId: string, ns: string) => JSON.stringify([sessionId, ns]);

/**
 * The rows a read found, opened: each checkpoint with its values rebuilt from their chains (delta.ts) and its
 * writes; `cache` (a read of one checkpoint) keeps the values as the bases of the next writes.
 */
export function openReads(
  found: Found,
  keys: CodecKeys | undefined,
  cache: ValueCache | undefined,
): CheckpointRead[] {
  const built = new Map<string, Map<string, Map<string, Uint8Array | null>>>();
  const chains = new Map<string, Map<string, Map<string, ChainRow>>>();
  for (const [g, rows] of found.chains) {
    const [sessionId, ns] = JSON.parse(g) as [string, string];
    const byChannel = new Map<string, Map<string, ChainRow>>();
    const referring: [ChainRow, ValueRef, string][] = [];
    for (const r of rows) {
      const channel = String(r.channel);
      const version = String(r.version);
      // A row keeping part of its bytes in another row (value-refs.ts): its own part here, the rest below.
      const ref = parseValueRef(String(r.type));
      const type = ref ? ref.type : String(r.type);
      const opened =
        r.data === null || r.data === undefined
          ? null
          : unpack(type, openedBytes(keys, sessionId, rowId("v", ns, channel, version), r));
      const data = opened?.data ?? null;
      const row: ChainRow = {
        version,
        tag: String(r.tag),
        type: opened?.type ?? unpack(type, new Uint8Array()).type,
        base: r.base === null || r.base === undefined ? null : String(r.base),
        prefix: Number(r.prefix),
        data,
        depth: Number(r.depth),
        chain: Number(r.chain),
        ...(ref ? { referring: true } : {}),
      };
      if (ref) referring.push([row, ref, channel]);
      const m = byChannel.get(channel) ?? new Map<string, ChainRow>();
      byChannel.set(channel, m);
      m.set(version, row);
    }
    // The rows referred to never refer themselves, so each referring row is rebuilt from rows opened above.
    for (const [row, ref, channel] of referring) {
      const other = byChannel.get(ref.channel)?.get(ref.version);
      const data =
        row.data && other?.data && other.tag === ref.tag && !other.referring
          ? withPiece(row.data, ref, other.data)
          : null;
      if (data === null)
        throw new SessionError(
          "STORAGE",
          `The value of channel "${channel}" of session "${sessionId}" lost the row it refers to`,
        );
      row.data = data;
    }
    chains.set(g, byChannel);
    built.set(g, new Map());
  }
  // A value's bytes, rebuilt once however many checkpoints of the page (or writes: write-refs.ts) name it.
  const bytesOf = (sessionId: string, ns: string, channel: string, version: string) => {
    const g = group(sessionId, ns);
    const memo = built.get(g) as Map<string, Map<string, Uint8Array | null>>;
    const known = memo.get(channel) ?? new Map<string, Uint8Array | null>();
    memo.set(channel, known);
    const rows = chains.get(g)?.get(channel) ?? new Map<string, ChainRow>();
    // A version this process wrote or read, its row still there under the same tag (rows are never changed, and
    // one written again after a delete has a new tag): its bytes, with no chain rebuilt.
    const held = found.held.get(g)?.get(channel);
    const same = held !== undefined && held.version === version && rows.get(version)?.tag === held.tag;
    const bytes = known.has(version) ? known.get(version) : same ? held.bytes : rebuild(rows, version);
    if (bytes === undefined)
      throw new SessionError(
        "STORAGE",
        `The value of channel "${channel}" of session "${sessionId}" lost its chain`,
      );
    known.set(version, bytes);
    return bytes;
  };
  return found.rows.map((r) => {
    const sessionId = String(r.session_id);
    const ns = String(r.ns);
    const id = idOf(r.id);
    const g = group(sessionId, ns);
    const values = Object.entries(versionsOf(r)).flatMap(([channel, named]) => {
      const version = String(named);
      const row = chains.get(g)?.get(channel)?.get(version);
      if (!row) return [];
      const bytes = bytesOf(sessionId, ns, channel, version);
      if (cache && bytes !== null)
        cache.set(sessionId, ns, channel, {
          version,
          tag: row.tag,
          bytes,
          depth: row.depth,
          chain: row.chain,
          stored:
            channel === INPUT_CHANNEL && !row.referring && row.data
              ? { type: row.type, bytes: row.data, base: row.base, prefix: row.prefix }
              : undefined,
        });
      return [{ channel, version, type: row.type, data: bytes }];
    });
    const writes = (found.writes.get(JSON.stringify([sessionId, ns, id])) ?? []).map((w) => {
      const ref = parseRef(String(w.type));
      const at = { taskId: idOf(w.task_id), idx: Number(w.idx), channel: String(w.channel) };
      const taskPath = String(w.task_path ?? "");
      if (ref) {
        const value = bytesOf(sessionId, ns, ref.channel, ref.version);
        const data = value === null ? null : resolve(ref, value);
        if (data === null)
          throw new SessionError("STORAGE", `A pending write of session "${sessionId}" lost its value`);
        return { ...at, taskPath, type: ref.type, data };
      }
      const opened = openedBytes(keys, sessionId, rowId("w", ns, id, at.taskId, at.idx), w);
      return { ...at, taskPath, ...unpack(String(w.type), opened) };
    });
    const data = unpack(String(r.type), openedBytes(keys, sessionId, rowId("c", ns, id), r));
    const metadata = unpack(
      String(r.metadata_type),
      openedBytes(keys, sessionId, rowId("m", ns, id), r, "metadata"),
    );
    return {
      sessionId,
      ns,
      id,
      parentId: idOrNull(r.parent_id),
      type: data.type,
      data: data.data,
      metadataType: metadata.type,
      metadata: metadata.data,
      versions: versionsOf(r),
      values,
      writes,
    };
  });
}

// The channel versions a checkpoint row names (its `versions` column: versions.ts).
export function versionsOf(row: Row): Record<string, string | number> {
  const text = row.versions instanceof Uint8Array ? utf8Decode(row.versions) : String(row.versions ?? "{}");
  return unpackVersions(text);
}

/**
 * The values and writes of the checkpoint rows found: one chain read and one writes read per session and namespace.
 * `cache` (a read of one checkpoint): a wanted version this process holds is read as its one row, not its chain.
 */
export function* around(s: CheckpointStatements, rows: Row[], cache?: ValueCache): Program<Found> {
  type Group = { sessionId: string; ns: string; ids: string[]; wanted: Map<string, [string, string]> };
  const groups = new Map<string, Group>();
  for (const r of rows) {
    const sessionId = String(r.session_id);
    const ns = String(r.ns);
    const g = group(sessionId, ns);
    const at: Group = groups.get(g) ?? { sessionId, ns, ids: [], wanted: new Map() };
    groups.set(g, at);
    at.ids.push(idOf(r.id));
    for (const [channel, named] of Object.entries(versionsOf(r))) {
      const version = String(named);
      at.wanted.set(JSON.stringify([channel, version]), [channel, version]);
    }
  }
  const chains = new Map<string, Row[]>();
  const writes = new Map<string, Row[]>();
  const held = new Map<string, Map<string, KnownValue>>();
  for (const [g, at] of groups) {
    // The writes first: the values a write refers to (write-refs.ts) join the chain read.
    const stored: Row[] = [];
    for (let i = 0; i < at.ids.length; i += s.idsPerRead)
      stored.push(...((yield s.writes(at.sessionId, at.ns, at.ids.slice(i, i + s.idsPerRead))) as Row[]));
    for (const w of stored) {
      const key = JSON.stringify([at.sessionId, at.ns, idOf(w.checkpoint_id)]);
      const list = writes.get(key);
      if (list) list.push(w);
      else writes.set(key, [w]);
      const ref = parseRef(String(w.type));
      if (ref) at.wanted.set(JSON.stringify([ref.channel, ref.version]), [ref.channel, ref.version]);
    }
    const mine = new Map<string, KnownValue>();
    held.set(g, mine);
    const wanted = [...at.wanted.values()].map(([channel, version]): [string, string, string | null] => {
      const value = cache?.get(at.sessionId, at.ns, channel);
      if (value?.version !== version) return [channel, version, null];
      mine.set(channel, value);
      return [channel, version, value.tag];
    });
    const rows: Row[] = wanted.length === 0 ? [] : yield s.chain(at.sessionId, at.ns, wanted);
    // The rows that referring rows name (value-refs.ts), each one row (its tag stops the chain there).
    const have = new Set(rows.map((r) => JSON.stringify([String(r.channel), String(r.version)])));
    const named = new Map<string, [string, string, string]>();
    for (const r of rows) {
      const ref = parseValueRef(String(r.type));
      const key = ref && JSON.stringify([ref.channel, ref.version]);
      if (ref && key && !have.has(key)) named.set(key, [ref.channel, ref.version, ref.tag]);
    }
    if (named.size > 0) rows.push(...((yield s.chain(at.sessionId, at.ns, [...named.values()])) as Row[]));
    chains.set(g, rows);
  }
  return { rows, chains, writes, held };
}
