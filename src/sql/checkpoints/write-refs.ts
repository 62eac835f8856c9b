/**
 * A pending write kept as a reference to a stored channel value (docs/LANGGRAPH.md, "Storage"): a write whose bytes
 * are a slice of a small value this process stored or read (the graph's input, `__start__`, holds the bytes of the
 * input task's write of the messages channel) is stored with no bytes of its own, its tag naming the value's
 * channel and version and the slice. The statement inserts that form only while the value row is there with the
 * tag the writer knows (else the write goes in full), and value rows never change and go only with the session
 * (which takes the write with it), so a stored reference always reads back the bytes it was written with.
 *
 * The stored tag is the serializer's, `|`, the reference (`offset,length,version,channel`, the last two
 * URI-encoded: no `|` or `,` in them), then `|s1`; packing.ts's tags end in `|z1` or `|r` or hold no `|`, so every stored tag still
 * reads back unambiguously and rows written before read as they are.
 */
import { SessionError } from "../../errors.js";
import { utf8Encode } from "../../runtime/bytes.js";
import type { ValueCache } from "./delta.js";
import type { StoredBytes } from "./sealing.js";

const SUFFIX = "|s1";
// Below this a write is stored as it is (its reference would not be much smaller).
const MIN_BYTES = 64;
// A referenced value is at most this many times the write (plus a little): a read of the write rebuilds it.
const MAX_RATIO = 4;
const SLACK = 1024;

/** Where a write's bytes are in a stored value: its channel, version and tag, and the slice. */
export interface WriteRef {
  channel: string;
  version: string;
  tag: string;
  offset: number;
  length: number;
}

const NodeBuf = (globalThis as { Buffer?: typeof import("node:buffer").Buffer }).Buffer;

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  if (NodeBuf)
    return NodeBuf.from(haystack.buffer, haystack.byteOffset, haystack.byteLength).indexOf(
      NodeBuf.from(needle.buffer, needle.byteOffset, needle.byteLength),
    );
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Values a `put` of this process is writing (not known stored yet), with the put's promise. */
export class PendingValues {
  private readonly at = new Map<string, Set<{ values: PendingValue[]; done: Promise<unknown> }>>();

  /** `values` being written until `done` settles (then the value cache knows those that were stored). */
  offer(sessionId: string, ns: string, values: PendingValue[], done: Promise<unknown>): void {
    const small = values.filter((v) => v.bytes.length <= MAX_PENDING);
    if (small.length === 0) return;
    const key = JSON.stringify([sessionId, ns]);
    const set = this.at.get(key) ?? new Set();
    this.at.set(key, set);
    const entry = { values: small, done };
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

/** A value a put is writing. */
export interface PendingValue {
  channel: string;
  version: string;
  tag: string;
  bytes: Uint8Array;
}

// A value bigger than this is never referred to while its put is under way.
const MAX_PENDING = 65_536;

/**
 * A value of the session's namespace this process knows or is writing that holds `bytes` (small enough to
 * rebuild), if any; `wait` is the put of a value still being written (the write waits for it, so the value row is
 * there when it can be: else the statement stores the write in full).
 */
export function findRef(
  cache: ValueCache,
  pending: PendingValues,
  sessionId: string,
  ns: string,
  bytes: Uint8Array,
): (WriteRef & { wait?: Promise<unknown> }) | null {
  if (bytes.length < MIN_BYTES) return null;
  const fits = (value: Uint8Array) => value.length <= MAX_RATIO * bytes.length + SLACK;
  for (const v of pending.values(sessionId, ns)) {
    const offset = fits(v.bytes) ? indexOf(v.bytes, bytes) : -1;
    if (offset >= 0)
      return {
        channel: v.channel,
        version: v.version,
        tag: v.tag,
        offset,
        length: bytes.length,
        wait: v.done,
      };
  }
  for (const [channel, known] of cache.channels(sessionId, ns)) {
    const offset = fits(known.bytes) ? indexOf(known.bytes, bytes) : -1;
    if (offset >= 0) return { channel, version: known.version, tag: known.tag, offset, length: bytes.length };
  }
  return null;
}

/** The stored tag of a write of serializer tag `type` kept as `ref`. */
export function refType(type: string, ref: WriteRef): string {
  const at = [ref.offset, ref.length, encodeURIComponent(ref.version), encodeURIComponent(ref.channel)];
  return `${type}|${at.join(",")}${SUFFIX}`;
}

/** A stored write's reference and serializer tag, or null for a write stored with its bytes. */
export function parseRef(
  stored: string,
): { type: string; channel: string; version: string; offset: number; length: number } | null {
  if (!stored.endsWith(SUFFIX)) return null;
  const body = stored.slice(0, -SUFFIX.length);
  const bar = body.lastIndexOf("|");
  const [offset, length, version, channel] = body.slice(bar + 1).split(",");
  if (channel === undefined || version === undefined)
    throw new SessionError("STORAGE", `A pending write's reference is damaged: ${stored}`);
  return {
    type: body.slice(0, bar),
    channel: decodeURIComponent(channel),
    version: decodeURIComponent(version),
    offset: Number(offset),
    length: Number(length),
  };
}

/** No bytes: what a reference's row stores (in clear for every owner: there is nothing to seal). */
export const NO_BYTES = utf8Encode("");

/** A write's reference form, as a statement stores it while the value row `channel`/`version`/`tag` is there. */
export interface RefForm {
  channel: string;
  version: string;
  tag: string;
  /** The stored tag ({@link refType}) and the stored (empty, clear) bytes. */
  type: string;
  data: StoredBytes;
}
