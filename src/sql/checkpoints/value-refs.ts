/**
 * The graph's input value kept as a reference to the value that took it (docs/LANGGRAPH.md, "Storage"). LangGraph
 * stores a run's input as a version of the `__start__` channel at the input checkpoint, then the next checkpoint's
 * messages list takes the same message (a delta's suffix): each user message was stored twice. The next checkpoint's
 * put therefore turns the `__start__` row it knows into a reference to a row it writes: the row keeps the bytes the
 * other row lacks (the input's framing, a few bytes), and its tag names the other row and where in that row's stored
 * bytes (its delta's suffix, or its full value) the rest is:
 *
 * - only while the input row is there with the tag, base and prefix this process knows (the stored form its bytes
 *   are; a delta that went in full keeps its tag) and not a reference yet, and the row referred
 *   to is the put's own (inserted by the same statement or transaction, with the put's tag): rows never change their
 *   bytes, so the reference always reads back the bytes the input row was written with;
 * - only `__start__` rows refer, and only to rows of other channels, which never refer: a reference is one row away;
 * - the row keeps its version, tag and chain (a later input version may be a delta of it): a reader rebuilds the
 *   row's stored bytes first (reads.ts), then its value as before.
 *
 * The stored tag is the packed tag (packing.ts), `|`, the reference (`at,offset,length,version,channel,tag`, each
 * part URI-encoded), then `|v1`: the rest goes at `at` of the row's own bytes, and is `length` bytes at `offset` of
 * the other row's stored bytes. Rows written before hold no `|v1` and read as they are.
 */
import { SessionError } from "../../errors.js";

/** LangGraph's input channel: the one whose rows refer to another value. */
export const INPUT_CHANNEL = "__start__";

const SUFFIX = "|v1";
// A piece shorter than this is not worth the reference (the tag grows by ~45 bytes).
const MIN_PIECE = 96;
// The input row's bytes are searched for an anchor of this many bytes, from at most this far in.
const ANCHOR = 32;
const ANCHOR_STEP = 16;
const ANCHOR_REACH = 512;

/** Where a stored row's bytes continue in another row: `length` bytes at `offset`, inserted at `at`. */
export interface Piece {
  at: number;
  offset: number;
  length: number;
}

/** A value row's reference to another row of its namespace: the piece and the other row's channel, version, tag. */
export interface ValueRef extends Piece {
  channel: string;
  version: string;
  tag: string;
}

const NodeBuf = (globalThis as { Buffer?: typeof import("node:buffer").Buffer }).Buffer;

const buf = (a: Uint8Array) =>
  (NodeBuf as typeof import("node:buffer").Buffer).from(a.buffer, a.byteOffset, a.byteLength);

/** The longest stretch of `stored` found in `other` from an anchor near `stored`'s start, if long enough. */
export function findPiece(stored: Uint8Array, other: Uint8Array): Piece | null {
  if (!NodeBuf || stored.length < MIN_PIECE || other.length < MIN_PIECE) return null;
  const s = buf(stored);
  const o = buf(other);
  const reach = Math.min(ANCHOR_REACH, stored.length - ANCHOR);
  for (let h = 0; h <= reach; h += ANCHOR_STEP) {
    const offset = o.indexOf(s.subarray(h, h + ANCHOR));
    if (offset < 0) continue;
    let start = h;
    let from = offset;
    while (start > 0 && from > 0 && stored[start - 1] === other[from - 1]) {
      start--;
      from--;
    }
    let end = h + ANCHOR;
    let to = offset + ANCHOR;
    while (end < stored.length && to < other.length && stored[end] === other[to]) {
      end++;
      to++;
    }
    if (end - start >= MIN_PIECE) return { at: start, offset: from, length: end - start };
  }
  return null;
}

/** The bytes a reference's row keeps: its stored bytes without the piece. */
export function withoutPiece(stored: Uint8Array, piece: Piece): Uint8Array {
  const kept = new Uint8Array(stored.length - piece.length);
  kept.set(stored.subarray(0, piece.at), 0);
  kept.set(stored.subarray(piece.at + piece.length), piece.at);
  return kept;
}

/** The stored tag of a row whose packed tag is `packedType`, kept as `ref`. */
export function valueRefType(packedType: string, ref: ValueRef): string {
  const parts = [ref.at, ref.offset, ref.length, ref.version, ref.channel, ref.tag];
  return `${packedType}|${parts.map((part) => encodeURIComponent(String(part))).join(",")}${SUFFIX}`;
}

/** A stored row tag's reference and packed tag, or null for a row that holds its own bytes. */
export function parseValueRef(stored: string): (ValueRef & { type: string }) | null {
  if (!stored.endsWith(SUFFIX)) return null;
  const body = stored.slice(0, -SUFFIX.length);
  const bar = body.lastIndexOf("|");
  const parts = body
    .slice(bar + 1)
    .split(",")
    .map(decodeURIComponent);
  const [at, offset, length, version, channel, tag] = parts;
  if (bar < 0 || parts.length !== 6 || tag === undefined || channel === undefined || version === undefined)
    throw new SessionError("STORAGE", `A channel value's reference is damaged: ${stored}`);
  return {
    type: body.slice(0, bar),
    at: Number(at),
    offset: Number(offset),
    length: Number(length),
    version,
    channel,
    tag,
  };
}

/** A referring row's stored bytes from what it keeps and the other row's stored bytes (null: they do not fit). */
export function withPiece(kept: Uint8Array, piece: Piece, other: Uint8Array): Uint8Array | null {
  if (piece.at > kept.length || piece.offset + piece.length > other.length) return null;
  const out = new Uint8Array(kept.length + piece.length);
  out.set(kept.subarray(0, piece.at), 0);
  out.set(other.subarray(piece.offset, piece.offset + piece.length), piece.at);
  out.set(kept.subarray(piece.at), piece.at + piece.length);
  return out;
}

/** An input row a put turns into a reference to one of its rows (see the file's comment). */
export interface ValueRefUpdate {
  /**
   * The input row: its channel, version, and the tag, base and prefix it must still hold (its stored bytes are then
   * the ones this process knows: a delta that went in full has the tag it planned, but no base).
   */
  channel: string;
  version: string;
  tag: string;
  base: string | null;
  prefix: number;
  /** The serializer's tag of its value, the bytes it keeps, and its reference. */
  serializerType: string;
  kept: Uint8Array;
  ref: ValueRef;
}

/** A row this process knows the stored bytes of (its delta's suffix or its full value), as stored. */
export interface KnownStored {
  version: string;
  tag: string;
  base: string | null;
  prefix: number;
  type: string;
  stored: Uint8Array;
}

/**
 * The input row `input` (known to this process, not a reference) as a reference to one of `rows` (a put's rows:
 * their channel, version, tag and stored bytes), if one holds enough of it.
 */
export function inputRef(
  input: KnownStored,
  rows: readonly { channel: string; version: string; tag: string; stored: Uint8Array }[],
): ValueRefUpdate | null {
  for (const row of rows) {
    if (row.channel === INPUT_CHANNEL) continue;
    const piece = findPiece(input.stored, row.stored);
    if (!piece) continue;
    return {
      channel: INPUT_CHANNEL,
      version: input.version,
      tag: input.tag,
      base: input.base,
      prefix: input.prefix,
      serializerType: input.type,
      kept: withoutPiece(input.stored, piece),
      ref: { ...piece, channel: row.channel, version: row.version, tag: row.tag },
    };
  }
  return null;
}
