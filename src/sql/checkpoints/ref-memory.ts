/**
 * What a process remembers to store writes as references (write-refs.ts): the values its puts are writing, and the
 * writes it stored in full, by checkpoint, until the child checkpoint's put can refer them to its values; and the
 * steps that use it (the writes a `putWrites` stores, the write rows a `put` turns into references).
 */
import type { StoredChannelValue, StoredCheckpoint, StoredWrite } from "../../contract/checkpoints.js";
import type { ValueCache } from "./delta.js";
import { pack } from "./packing.js";
import { rowId, type StoredBytes, storedBytes } from "./sealing.js";
import { locate, NO_BYTES, refType, type WriteRef } from "./write-refs.js";

/** A value a put is writing. */
export interface PendingValue {
  channel: string;
  version: string;
  tag: string;
  bytes: Uint8Array;
}

/** Values a `put` of this process is writing (not known stored yet), with the put's promise. */
export class PendingValues {
  private readonly at = new Map<string, Set<{ values: PendingValue[]; done: Promise<unknown> }>>();

  /** `values` being written until `done` settles (then the value cache knows those that were stored). */
  offer(sessionId: string, ns: string, values: PendingValue[], done: Promise<unknown>): void {
    if (values.length === 0) return;
    const key = JSON.stringify([sessionId, ns]);
    const set = this.at.get(key) ?? new Set();
    this.at.set(key, set);
    const entry = { values, done };
    set.add(entry);
    const drop = () => {
      set.delete(entry);
      if (set.size === 0 && this.at.get(key) === set) this.at.delete(key);
    };
    done.then(drop, drop);
  }

  *values(sessionId: string, ns: string): Generator<PendingValue & { done: Promise<unknown> }> {
    for (const { values, done } of this.at.get(JSON.stringify([sessionId, ns])) ?? [])
      for (const v of values) yield { ...v, done };
  }
}

/**
 * A value of the session's namespace this process knows or is writing that holds `bytes`, if any; `wait` is the
 * put of a value still being written (the write waits for it, so the value row is there when it can be: else the
 * statement stores the write in full).
 */
export function findRef(
  cache: ValueCache,
  pending: PendingValues,
  sessionId: string,
  ns: string,
  bytes: Uint8Array,
): (WriteRef & { wait?: Promise<unknown> }) | null {
  for (const v of pending.values(sessionId, ns)) {
    const at = locate(v.bytes, bytes);
    if (at) return { channel: v.channel, version: v.version, tag: v.tag, ...at, wait: v.done };
  }
  for (const [channel, known] of cache.channels(sessionId, ns)) {
    const at = locate(known.bytes, bytes);
    if (at) return { channel, version: known.version, tag: known.tag, ...at };
  }
  return null;
}

/** A write this process stored in full: its serializer tag and bytes, and the row's stored tag and bytes. */
export interface RecentWrite {
  taskId: string;
  idx: number;
  serializerType: string;
  bytes: Uint8Array;
  type: string;
  data: Uint8Array;
}

/** The writes this process stored in full on its latest checkpoints (bounded), for their child's put. */
export class RecentWrites {
  private readonly writes = new Map<string, RecentWrite[]>();

  constructor(private readonly limit = 256) {}

  add(sessionId: string, ns: string, checkpointId: string, list: readonly RecentWrite[]): void {
    if (list.length === 0) return;
    const key = JSON.stringify([sessionId, ns, checkpointId]);
    const kept = [...(this.writes.get(key) ?? []), ...list];
    this.writes.delete(key);
    this.writes.set(key, kept);
    if (this.writes.size > this.limit) this.writes.delete(this.writes.keys().next().value as string);
  }

  /** The writes of checkpoint `checkpointId`, forgotten (its child's put is their one chance). */
  take(sessionId: string, ns: string, checkpointId: string): RecentWrite[] {
    const key = JSON.stringify([sessionId, ns, checkpointId]);
    const list = this.writes.get(key) ?? [];
    this.writes.delete(key);
    return list;
  }
}

/** A write row a put turns into a reference to one of its values (write-refs.ts). */
export interface RefUpdate {
  checkpointId: string;
  taskId: string;
  idx: number;
  /** The row as this process stored it: only then is it changed. */
  storedType: string;
  storedData: Uint8Array;
  /** Its reference's stored tag, and the value row it needs. */
  type: string;
  channel: string;
  version: string;
  tag: string;
}

/** A write as `putWrites` stores it: packed, with its reference form if a value holds it (and the put to wait for). */
export type PreparedWrite = StoredWrite & {
  serializerType: string;
  raw: Uint8Array;
  ref: { channel: string; version: string; tag: string; type: string } | null;
  wait: Promise<unknown> | undefined;
};

/** The writes `given` packed (packing.ts), each with its reference form where a value this process knows holds it. */
export function prepareWrites(
  cache: ValueCache,
  pending: PendingValues,
  sessionId: string,
  ns: string,
  given: readonly StoredWrite[],
): PreparedWrite[] {
  return given.map((w) => {
    const ref = findRef(cache, pending, sessionId, ns, w.data);
    const form = ref && {
      channel: ref.channel,
      version: ref.version,
      tag: ref.tag,
      type: refType(w.type, ref),
    };
    return { ...w, ...pack(w.type, w.data), serializerType: w.type, raw: w.data, ref: form, wait: ref?.wait };
  });
}

/** The writes of a put's parent this process stored in full that one of the put's values holds, as references. */
export function refUpdates(
  recent: RecentWrites,
  c: StoredCheckpoint,
  values: readonly { v: StoredChannelValue; tag: string }[],
): RefUpdate[] {
  if (c.parentId === null) return [];
  const updates: RefUpdate[] = [];
  for (const w of recent.take(c.sessionId, c.ns, c.parentId)) {
    for (const { v, tag } of values) {
      const at = v.data ? locate(v.data, w.bytes) : null;
      if (!at) continue;
      const ref = { channel: v.channel, version: v.version, tag, ...at };
      updates.push({
        checkpointId: c.parentId,
        taskId: w.taskId,
        idx: w.idx,
        storedType: w.type,
        storedData: w.data,
        type: refType(w.serializerType, ref),
        channel: v.channel,
        version: v.version,
        tag,
      });
      break;
    }
  }
  return updates;
}

/** The rows of one `putWrites` as stored (sealed under the key), remembered for the child's put once written. */
export class WriteRows {
  private last: { w: PreparedWrite; data: StoredBytes }[] = [];

  constructor(
    private readonly sessionId: string,
    private readonly ns: string,
    private readonly checkpointId: string,
  ) {}

  /** The rows of `writes` as stored under `key`, each with its reference form (no bytes to seal: a tag). */
  stored(key: Uint8Array | null, writes: readonly PreparedWrite[]) {
    this.last = writes.map((w) => ({
      w,
      data: storedBytes(key, this.sessionId, rowId("w", this.ns, this.checkpointId, w.taskId, w.idx), w.data),
    }));
    return this.last.map(({ w, data }) => ({
      w,
      data,
      ref: w.ref ? { ...w.ref, data: { data: NO_BYTES, sealed: false } } : undefined,
    }));
  }

  /** The rows written in full, remembered for the child's put. */
  written(recent: RecentWrites): void {
    recent.add(
      this.sessionId,
      this.ns,
      this.checkpointId,
      // A write that went as a reference (or tried to) is not turned into one again.
      this.last.flatMap(({ w, data }) =>
        w.ref
          ? []
          : [
              {
                taskId: w.taskId,
                idx: w.idx,
                serializerType: w.serializerType,
                bytes: w.raw,
                type: w.type,
                data: data.data,
              },
            ],
      ),
    );
  }
}
