/**
 * The rows a checkpoint write stores (steps.ts): its values as planned (full or a delta, delta.ts) and its payloads
 * compressed where it pays (packing.ts), then sealed for an encrypted owner (sealing.ts).
 */
import type { StoredChannelValue, StoredCheckpoint } from "../../contract/checkpoints.js";
import { planValue, type ValuePlan } from "./delta.js";
import { pack } from "./packing.js";
import { rowId, type StoredBytes, storedBytes } from "./sealing.js";
import { type ValueRef, type ValueRefUpdate, valueRefType } from "./value-refs.js";

/** A value row as written: its columns, how it is stored (full or a delta) and its stored bytes. */
export interface ValueRow {
  meta: { channel: string; version: string; type: string; tag: string };
  plan: ValuePlan;
  data: StoredBytes | null;
}

// A value to write and how this process plans to store it (null: the channel has no value at this version).
export interface Planned {
  v: StoredChannelValue;
  tag: string;
  plan: ValuePlan | null;
}

const EMPTY: ValuePlan = { base: null, baseTag: null, prefix: 0, data: new Uint8Array(), depth: 0, chain: 0 };

// The rows of `planned` as stored under `key` (compressed where it pays: packing.ts), each delta with its full
// form (written when its base is gone).
export function valueRows(
  c: StoredCheckpoint,
  planned: readonly Planned[],
  key: Uint8Array | null,
): (ValueRow & { full: (() => ValueRow) | null })[] {
  return planned.map(({ v, tag, plan }) => {
    const id = rowId("v", c.ns, v.channel, v.version);
    const row = (p: ValuePlan | null): ValueRow => {
      const packed = p ? pack(v.type, p.data) : null;
      return {
        meta: { channel: v.channel, version: v.version, type: packed?.type ?? v.type, tag },
        plan: p ?? EMPTY,
        data: packed ? storedBytes(key, c.sessionId, id, packed.data) : null,
      };
    };
    // The full form only when needed (its base gone): compressing and sealing it is the value's whole length.
    const data = v.data;
    return {
      ...row(plan),
      full: plan && plan.base !== null && data ? () => row(planValue(data, undefined)) : null,
    };
  });
}

// A checkpoint's bytes and metadata as stored (packing.ts).
export function packedCheckpoint(c: StoredCheckpoint): StoredCheckpoint {
  const data = pack(c.type, c.data);
  const metadata = pack(c.metadataType, c.metadata);
  return { ...c, type: data.type, data: data.data, metadataType: metadata.type, metadata: metadata.data };
}

/** An input row as a put turns it into a reference (value-refs.ts): its key, tag, new stored tag and bytes. */
export interface ValueRefRow {
  channel: string;
  version: string;
  tag: string;
  base: string | null;
  prefix: number;
  type: string;
  data: StoredBytes;
  ref: ValueRef;
}

// The input rows a put turns into references, as stored under `key` (what they keep compressed where it pays).
export function valueRefRows(
  c: StoredCheckpoint,
  updates: readonly ValueRefUpdate[],
  key: Uint8Array | null,
): ValueRefRow[] {
  return updates.map((u) => {
    const packed = pack(u.serializerType, u.kept);
    return {
      channel: u.channel,
      version: u.version,
      tag: u.tag,
      base: u.base,
      prefix: u.prefix,
      type: valueRefType(packed.type, u.ref),
      data: storedBytes(key, c.sessionId, rowId("v", c.ns, u.channel, u.version), packed.data),
      ref: u.ref,
    };
  });
}
