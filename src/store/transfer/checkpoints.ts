/**
 * A session's checkpoints in its transfer stream (contract/transfer.ts TransferCheckpoint): read newest first a page
 * at a time, opened (an export is the app's to protect; an import seals again for the importing store's owner), each
 * channel version carried once, as a delta of the version of its channel carried just before where they share a
 * prefix (a messages list growing by a message a step is carried about once, not once per step). An import rebuilds
 * every value byte for byte before it writes it, so the importing store stores it in its own form.
 */
import type { CheckpointStore, StoredChannelValue } from "../../contract/checkpoints.js";
import type { TransferChannelValue, TransferCheckpoint } from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { describe } from "../../message/describe.js";

// Checkpoints per read (each with its values rebuilt and its writes).
const PAGE = 50;
// A shorter common prefix is not worth a delta.
const MIN_PREFIX = 64;

const channelOf = (ns: string, channel: string) => JSON.stringify([ns, channel]);

/** The last value carried of each (namespace, channel): the base of the next one. */
type Carried = Map<string, { version: string; bytes: Uint8Array | null }>;

/** A session's checkpoints as transfer items, newest first (none when the store keeps no checkpoints). */
export async function* exportCheckpoints(
  store: CheckpointStore,
  sessionId: string,
): AsyncGenerator<TransferCheckpoint> {
  const seen = new Set<string>();
  const last: Carried = new Map();
  let after: { sessionId: string; ns: string; id: string } | undefined;
  for (;;) {
    const page = await store.page({ sessionId, after, limit: PAGE });
    for (const c of page) {
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
      yield { ...row, values, writes: c.writes };
    }
    if (page.length < PAGE) return;
    const end = page.at(-1)!;
    after = { sessionId, ns: end.ns, id: end.id };
  }
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
        throw invalid(
          `The value of channel "${v.channel}" at version ${describe(v.version)} of checkpoint "${c.id}" names a base (${describe(version)}) that is not the value carried before it`,
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

const invalid = (message: string) =>
  new SessionError("INVALID_ARGUMENT", message, { issues: [{ path: "checkpoint", rule: "invalid" }] });

const isText = (value: unknown): value is string => typeof value === "string";
const isBytes = (value: unknown): value is Uint8Array => value instanceof Uint8Array;

/** Throws `INVALID_ARGUMENT` unless `c` has the shape of a transferred checkpoint (the saver checks its ids). */
export function assertCheckpoint(c: TransferCheckpoint): void {
  const ok =
    typeof c === "object" &&
    c !== null &&
    isText(c.ns) &&
    isText(c.id) &&
    c.id.length > 0 &&
    (c.parentId === null || isText(c.parentId)) &&
    isText(c.type) &&
    isBytes(c.data) &&
    isText(c.metadataType) &&
    isBytes(c.metadata) &&
    typeof c.versions === "object" &&
    c.versions !== null &&
    Object.values(c.versions).every((v) => isText(v) || Number.isFinite(v)) &&
    Array.isArray(c.values) &&
    c.values.every(
      (v) =>
        isText(v.channel) &&
        isText(v.version) &&
        isText(v.type) &&
        (v.data === null || isBytes(v.data)) &&
        (v.base === undefined ||
          (isText(v.base.version) && Number.isSafeInteger(v.base.prefix) && v.base.prefix >= 0)),
    ) &&
    Array.isArray(c.writes) &&
    c.writes.every(
      (w) =>
        isText(w.taskId) &&
        Number.isSafeInteger(w.idx) &&
        isText(w.channel) &&
        isText(w.type) &&
        isBytes(w.data) &&
        isText(w.taskPath),
    );
  if (!ok)
    throw invalid(
      `Checkpoint ${describe((c as { id?: unknown } | null)?.id)} is not a transferred checkpoint`,
    );
}
