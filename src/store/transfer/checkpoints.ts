/**
 * A session's checkpoints in its transfer stream (contract/transfer.ts TransferCheckpoint): read namespace by
 * namespace, newest first, a page at a time, opened (an export is the app's to protect; an import seals again for the importing store's owner), each
 * channel version carried once, as a delta of the version of its channel carried just before where they share a
 * prefix (a messages list growing by a message a step is carried about once, not once per step). An import rebuilds
 * every value byte for byte before it writes it, so the importing store stores it in its own form.
 */

import { z } from "zod";
import type { CheckpointRead, CheckpointStore, StoredChannelValue } from "../../contract/checkpoints.js";
import type { TransferChannelValue, TransferCheckpoint } from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { describe } from "../../message/describe.js";
import { parseInput } from "../../schema/parse.js";
import { rule, ruleOf } from "../../schema/to-session-error.js";

// Checkpoints per read (each with its values rebuilt and its writes).
const PAGE = 50;
// A shorter common prefix is not worth a delta.
const MIN_PREFIX = 64;

const channelOf = (ns: string, channel: string) => JSON.stringify([ns, channel]);

/** The last value carried of each (namespace, channel): the base of the next one. */
type Carried = Map<string, { version: string; bytes: Uint8Array | null }>;

/**
 * A session's checkpoints as transfer items, namespace by namespace (in byte order), each newest first: a page is one
 * range of the primary key (session, namespace, id), read backwards.
 */
export async function* exportCheckpoints(
  store: CheckpointStore,
  sessionId: string,
): AsyncGenerator<TransferCheckpoint> {
  const seen = new Set<string>();
  const last: Carried = new Map();
  for (const ns of await store.namespaces(sessionId)) {
    for (let before: string | undefined; ; ) {
      const page = await store.page({ sessionId, ns, before, limit: PAGE });
      for (const c of page) yield carried(c, seen, last);
      if (page.length < PAGE) break;
      before = page.at(-1)!.id;
    }
  }
}

/** A checkpoint as carried: the values whose version the stream has not carried yet, each a delta where it pays. */
function carried(c: CheckpointRead, seen: Set<string>, last: Carried): TransferCheckpoint {
  const values: TransferChannelValue[] = [];
  for (const v of c.values) {
    const key = JSON.stringify([c.ns, v.channel, v.version]);
    if (seen.has(key)) continue;
    seen.add(key);
    const previous = last.get(channelOf(c.ns, v.channel));
    last.set(channelOf(c.ns, v.channel), { version: v.version, bytes: v.data });
    const prefix = previous?.bytes && v.data ? commonPrefix(previous.bytes, v.data) : 0;
    if (!previous || prefix < MIN_PREFIX || !v.data) values.push({ ...v });
    else {
      const base = { version: previous.version, prefix };
      values.push({
        channel: v.channel,
        version: v.version,
        type: v.type,
        data: v.data.subarray(prefix),
        base,
      });
    }
  }
  const { sessionId: _session, values: _values, ...row } = c;
  return { ...row, values, writes: c.writes };
}

/** One session's checkpoint import: holds the last value of each channel, which a delta names as its base. */
export class CheckpointImport {
  private readonly last: Carried = new Map();

  constructor(
    private readonly store: CheckpointStore,
    private readonly sessionId: string,
  ) {}

  /** Writes a checkpoint, its values rebuilt, and its pending writes (one stored under its task and index is kept). */
  async write(c: TransferCheckpoint): Promise<void> {
    assertCheckpoint(c);
    const values = c.values.map((v) => this.rebuilt(c, v));
    const { values: _values, writes, ...row } = c;
    await this.store.put({ ...row, sessionId: this.sessionId }, values);
    if (writes.length > 0) await this.store.putWrites(this.sessionId, c.ns, c.id, writes, false);
  }

  private rebuilt(c: TransferCheckpoint, v: TransferChannelValue): StoredChannelValue {
    const key = channelOf(c.ns, v.channel);
    let data = v.data;
    if (v.base !== undefined) {
      const base = this.last.get(key);
      const { version, prefix } = v.base;
      if (!base?.bytes || base.version !== version || !(prefix <= base.bytes.length) || data === null) {
        // The stream's state, not the record's shape: the base is the value this import holds of the channel.
        throw new SessionError(
          "INVALID_ARGUMENT",
          `The value of channel "${v.channel}" at version ${describe(v.version)} of checkpoint "${c.id}" names a base (${describe(version)}) that is not the value carried before it`,
          { issues: [{ path: "values.base", rule: "conflict" }] },
        );
      }
      data = new Uint8Array(prefix + data.length);
      data.set(base.bytes.subarray(0, prefix));
      data.set(v.data!, prefix);
    }
    this.last.set(key, { version: v.version, bytes: data });
    return { channel: v.channel, version: v.version, type: v.type, data };
  }
}

function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

const text = (field: string) =>
  z.custom<string>((value) => typeof value === "string", ruleOf(field, "must be a string"));
const bytes = (field: string) =>
  z.custom<Uint8Array>((value) => value instanceof Uint8Array, ruleOf(field, "must be a Uint8Array"));
const whole = (field: string, min: number) =>
  z.custom<number>(
    (value) => Number.isSafeInteger(value) && (value as number) >= min,
    ruleOf(field, min === 0 ? "must be a whole number >= 0" : "must be a whole number"),
  );

/** A transferred checkpoint (contract/transfer.ts TransferCheckpoint); the saver checks its ids when it reads them. */
const transferCheckpoint = z.object(
  {
    ns: text("The namespace"),
    id: z.custom<string>(
      (value) => typeof value === "string" && value.length > 0,
      ruleOf("The id", "must be a non-empty string"),
    ),
    parentId: text("The parent").nullable(),
    type: text("The type"),
    data: bytes("The bytes"),
    metadataType: text("The metadata's type"),
    metadata: bytes("The metadata"),
    versions: z.custom<Record<string, string | number>>(
      (value) =>
        typeof value === "object" &&
        value !== null &&
        !Array.isArray(value) &&
        Object.values(value).every((v) => typeof v === "string" || Number.isFinite(v)),
      ruleOf("The versions", "must be an object of strings and numbers"),
    ),
    values: z.array(
      z.object({
        channel: text("The channel"),
        version: text("The version"),
        type: text("The value's type"),
        data: bytes("The value").nullable(),
        base: z.object({ version: text("The base"), prefix: whole("The prefix", 0) }).optional(),
      }),
      rule("The values must be an array"),
    ),
    writes: z.array(
      z.object({
        taskId: text("The task"),
        idx: whole("The index", Number.MIN_SAFE_INTEGER),
        channel: text("The channel"),
        type: text("The write's type"),
        data: bytes("The write"),
        taskPath: text("The task path"),
      }),
      rule("The writes must be an array"),
    ),
  },
  rule("A transferred checkpoint must be an object"),
);

/** Throws `INVALID_ARGUMENT` (naming the checkpoint and the field) unless `c` is a transferred checkpoint. */
export function assertCheckpoint(c: TransferCheckpoint): void {
  parseInput(transferCheckpoint, c, {
    of: (record: unknown) => `checkpoint ${describe((record as { id?: unknown } | null)?.id)}`,
  });
}
