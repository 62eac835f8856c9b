/**
 * How checkpoint ids, parent ids and task ids are stored (SQLite migration 30, Postgres 29): as bytes whose order is
 * the ids' text order, so `list` (newest first), `before` and a page's cursor compare the stored column. LangGraph's
 * ids are uuids (v6 for checkpoints, which sort by time as text) but an app may pass any string, so:
 * - a canonical uuid (lowercase hex, hyphens at 8, 13, 18, 23) is `01` then its 16 bytes (17 bytes, not 36);
 * - any other id is `01`, the 16 bytes of the greatest canonical uuid below it, then its UTF-8; or `00` then its
 *   UTF-8 when no uuid is below it.
 * Byte order of canonical uuids is their text order (hex digits and fixed hyphens), and an id that is not a uuid
 * sorts after the uuid it names and before the next, with ids of the same gap by their text: for any two ids,
 * stored bytes compare as their UTF-8 does (memcmp, shorter first), which is SQLite's BLOB and TEXT order and
 * Postgres's bytea and `COLLATE "C"` order. test/langgraph/stored-ids.test.ts checks it on mixed ids.
 */
import { SessionError } from "../../errors.js";
import { concatBytes, utf8Decode, utf8Encode } from "../../runtime/bytes.js";

const HYPHENS = new Set([8, 13, 18, 23]);
const UUID_CHARS = 36;
const HYPHEN = 0x2d;
const HEX = "0123456789abcdef";

// A hex digit's value, or -1.
function nibble(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

const matches = (c: number, at: number) => (HYPHENS.has(at) ? c === HYPHEN : nibble(c) >= 0);

/** The 16 bytes of 32 nibbles. */
function packed(nibbles: readonly number[]): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = (nibbles[2 * i]! << 4) | nibbles[2 * i + 1]!;
  return out;
}

/**
 * The greatest canonical uuid whose text is below `b` (a UTF-8 id that is not one), as 32 nibbles; null if none.
 * `b` matches the uuid pattern up to position `k`: past the pattern it follows that uuid; at a byte below the
 * pattern's class (or its end) it precedes every uuid of its prefix; above, it follows them; between `9` and `a` it
 * follows the prefix's uuids continuing in `9`.
 */
function uuidBelow(b: Uint8Array): number[] | null {
  let k = 0;
  while (k < UUID_CHARS && k < b.length && matches(b[k]!, k)) k++;
  const n: number[] = [];
  for (let i = 0; i < k; i++) if (!HYPHENS.has(i)) n.push(nibble(b[i]!));
  const fill = () => [...n, ...new Array<number>(32 - n.length).fill(15)];
  if (k === UUID_CHARS) return n;
  const c = k < b.length ? b[k]! : -1;
  const low = HYPHENS.has(k) ? c < HYPHEN : c < 0x30;
  if (!low) {
    if (!HYPHENS.has(k) && c > 0x39 && c < 0x61) n.push(9);
    return fill();
  }
  // Below every uuid of the prefix: the prefix less one, then the greatest fill.
  for (let i = n.length - 1; i >= 0; i--) {
    if (n[i]! > 0) {
      n[i]!--;
      return fill();
    }
    n[i] = 15;
  }
  return null;
}

function isUuid(b: Uint8Array): boolean {
  if (b.length !== UUID_CHARS) return false;
  for (let i = 0; i < UUID_CHARS; i++) if (!matches(b[i]!, i)) return false;
  return true;
}

function nibblesOf(b: Uint8Array): number[] {
  const n: number[] = [];
  for (let i = 0; i < UUID_CHARS; i++) if (!HYPHENS.has(i)) n.push(nibble(b[i]!));
  return n;
}

/** The stored form of an id. */
export function storedId(id: string): Uint8Array {
  const b = utf8Encode(id);
  if (isUuid(b)) return join([1], packed(nibblesOf(b)));
  const below = uuidBelow(b);
  return below === null ? join([0], b) : join([1], packed(below), b);
}

/** The stored form of an id in hex. */
export function storedIdHex(id: string): string {
  let s = "";
  for (const b of storedId(id)) s += HEX[b >> 4]! + HEX[b & 15]!;
  return s;
}

/** The stored form of an id that may be absent (a parent). */
export const storedIdOrNull = (id: string | null | undefined): Uint8Array | null =>
  id === null || id === undefined ? null : storedId(id);

/** The id a stored column holds (`STORAGE` when it holds none). */
export function idOf(value: unknown): string {
  const b = value instanceof ArrayBuffer ? new Uint8Array(value) : value;
  if (!(b instanceof Uint8Array)) throw new SessionError("STORAGE", "A checkpoint id column holds no bytes");
  if (b.length === 17 && b[0] === 1) {
    let s = "";
    for (let i = 1; i < 17; i++) {
      if (HYPHENS.has(s.length)) s += "-";
      s += HEX[b[i]! >> 4]! + HEX[b[i]! & 15]!;
      if (HYPHENS.has(s.length)) s += "-";
    }
    return s;
  }
  if (b.length >= 1 && b[0] === 0) return utf8Decode(b.subarray(1));
  if (b.length > 17 && b[0] === 1) return utf8Decode(b.subarray(17));
  throw new SessionError("STORAGE", "A checkpoint id column holds no stored id");
}

/** The id a stored column holds, or null. */
export const idOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : idOf(value);

const join = (...parts: (readonly number[] | Uint8Array)[]) =>
  concatBytes(parts.map((p) => Uint8Array.from(p)));
