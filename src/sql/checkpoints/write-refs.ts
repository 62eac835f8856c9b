/**
 * A pending write kept as a reference to a stored channel value (docs/LANGGRAPH.md, "Storage"). LangGraph stores
 * each message twice more than its messages list holds it: the input task's write of a user message is a slice of
 * the graph's input (`__start__`) value, and a node's write of its reply (`[message]`) is the list's new element
 * between brackets. Such a write is stored with no bytes of its own, its tag naming the value's channel and version
 * and the slice, in either order the two arrive:
 *
 * - a write whose value this process stored (or is storing: the write waits for that put) is inserted as a
 *   reference while the value row is there with the tag the writer knows, else in full (one statement);
 * - a put whose value holds a write this process stored in full on the parent checkpoint turns that write row into
 *   a reference, only while it still holds exactly the bytes this process wrote and the value row is the put's own.
 *
 * Value rows never change and go only with the session (which takes the write with it), so a reference always reads
 * back the bytes it was written with; a race only leaves a write in full.
 *
 * The stored tag is the serializer's, `|`, the reference (`offset,length,version,channel` and, for a list of one
 * element, `,l,gap,rest`; each part URI-encoded: no `|` or `,` in them), then `|s1`; packing.ts's tags end in `|z1` or `|r` or hold no `|`, so every
 * stored tag still reads back unambiguously and rows written before read as they are.
 */
import { SessionError } from "../../errors.js";
import { utf8Encode } from "../../runtime/bytes.js";
import type { StoredBytes } from "./sealing.js";

const SUFFIX = "|s1";
// A reference's fifth part when the write is a list of one element (`[`, the slices, `]`).
const LIST = "l";
// Below this a write is stored as it is (its reference would not be much smaller).
const MIN_BYTES = 64;
// A value at most this many times the write (plus a little) is searched whole; a longer one (a messages list) only
// at its end, where a step's new messages are.
const MAX_RATIO = 4;
const SLACK = 1024;

/**
 * Where a write's bytes are in a stored value: its channel, version and tag, and the slice, with `head` before it
 * and `tail` after it (both empty, or `[` and `]`: a list of one element), and after the slice `gap` bytes of the
 * value skipped and `rest` bytes more taken. A node's reply is `[`, the list's last element, `]`, but for the `id`
 * the messages reducer adds to the element (the gap).
 */
export interface WriteRef {
  channel: string;
  version: string;
  tag: string;
  offset: number;
  length: number;
  head: string;
  tail: string;
  gap: number;
  rest: number;
}

// At most this many bytes of the value are skipped (a message's id and its key, as the reducer adds them).
const MAX_GAP = 128;

const NodeBuf = (globalThis as { Buffer?: typeof import("node:buffer").Buffer }).Buffer;

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  if (NodeBuf)
    return NodeBuf.from(haystack.buffer, haystack.byteOffset, haystack.byteLength).indexOf(
      NodeBuf.from(needle.buffer, needle.byteOffset, needle.byteLength),
      from,
    );
  outer: for (let i = from; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]

/** Where a write is in its value, without the value's name. */
export type Slice = Pick<WriteRef, "offset" | "length" | "head" | "tail" | "gap" | "rest">;

/** Where `bytes` (a write's serializer bytes) are in `value`, if they are (see {@link WriteRef}). */
export function locate(value: Uint8Array, bytes: Uint8Array): Slice | null {
  if (bytes.length < MIN_BYTES) return null;
  if (value.length <= MAX_RATIO * bytes.length + SLACK) {
    const offset = indexOf(value, bytes, 0);
    if (offset >= 0) return { offset, length: bytes.length, head: "", tail: "", gap: 0, rest: 0 };
  }
  // A list of one element, the value's last (before its closing bracket), maybe less a gap.
  const end = value.length - 1;
  if (bytes[0] !== OPEN || bytes[bytes.length - 1] !== CLOSE || value[end] !== CLOSE) return null;
  const inner = bytes.subarray(1, bytes.length - 1);
  let rest = 0;
  while (rest < inner.length && rest < end && inner[inner.length - 1 - rest] === value[end - 1 - rest])
    rest++;
  const first = inner.subarray(0, inner.length - rest);
  const before = end - rest;
  // The slice ends at most MAX_GAP bytes before the rest: only that stretch of a long list is searched.
  const offset =
    first.length === 0 ? before : indexOf(value, first, Math.max(0, before - first.length - MAX_GAP));
  const gap = before - offset - first.length;
  if (offset < 0 || gap < 0 || gap > MAX_GAP) return null;
  return gap === 0
    ? { offset, length: inner.length, head: "[", tail: "]", gap: 0, rest: 0 }
    : { offset, length: first.length, head: "[", tail: "]", gap, rest };
}

/** The stored tag of a write of serializer tag `type` kept as `ref`. */
export function refType(type: string, ref: WriteRef): string {
  const parts: (string | number)[] = [ref.offset, ref.length, ref.version, ref.channel];
  if (ref.head !== "") parts.push(LIST, ref.gap, ref.rest);
  return `${type}|${parts.map((part) => encodeURIComponent(String(part))).join(",")}${SUFFIX}`;
}

/** A stored write's reference and serializer tag, or null for a write stored with its bytes. */
export function parseRef(stored: string): (Omit<WriteRef, "tag"> & { type: string }) | null {
  if (!stored.endsWith(SUFFIX)) return null;
  const body = stored.slice(0, -SUFFIX.length);
  const bar = body.lastIndexOf("|");
  const [offset, length, version, channel, list, gap = "0", rest = "0"] = body
    .slice(bar + 1)
    .split(",")
    .map(decodeURIComponent);
  if (channel === undefined || version === undefined || (list !== undefined && list !== LIST))
    throw new SessionError("STORAGE", `A pending write's reference is damaged: ${stored}`);
  const wrap = list === LIST ? "[" : "";
  return {
    type: body.slice(0, bar),
    channel,
    version,
    offset: Number(offset),
    length: Number(length),
    head: wrap,
    tail: wrap === "" ? "" : "]",
    gap: Number(gap),
    rest: Number(rest),
  };
}

/** The bytes of a write kept as `ref`, from its value's bytes (null: the value is too short: damaged). */
export function resolve(ref: Slice, value: Uint8Array): Uint8Array | null {
  const second = ref.offset + ref.length + ref.gap;
  if (second + ref.rest > value.length) return null;
  const head = utf8Encode(ref.head);
  const tail = utf8Encode(ref.tail);
  const out = new Uint8Array(head.length + ref.length + ref.rest + tail.length);
  out.set(head, 0);
  out.set(value.subarray(ref.offset, ref.offset + ref.length), head.length);
  out.set(value.subarray(second, second + ref.rest), head.length + ref.length);
  out.set(tail, head.length + ref.length + ref.rest);
  return out;
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
