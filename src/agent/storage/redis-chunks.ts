import { SessionError } from "../../errors.js";

/**
 * How much one Redis script may carry (arguments written or elements read). Redis runs a script alone, and its
 * cost is copying the bytes (into Lua strings, the list, the reply): 1 MiB is ~5 ms of every other client's time
 * (~15 ms at worst on a loaded machine), while a 40 MB session still takes only ~40 round trips.
 */
export const CHUNK_BYTES = 1024 * 1024;
/** At most this many list elements per script, so thousands of tiny messages are chunked too. */
export const CHUNK_ITEMS = 1000;
/**
 * The largest list element: a longer body (an image, a long tool output) is stored as several elements, every one
 * but the last marked with {@link PIECE}, so a script reading a few elements never reads a whole 20 MB message.
 */
export const PIECE_BYTES = 64 * 1024;
/** First character of an element that is not a body's last piece; JSON text never holds a raw U+0001. */
export const PIECE = "\u0001";

/** A body (JSON text) as list elements of at most {@link PIECE_BYTES} UTF-8 bytes each. */
export function toElements(body: string, out: string[]): void {
  // Three bytes per UTF-16 unit at most: a body this short needs no encoding to know it fits.
  if (body.length * 3 <= PIECE_BYTES) {
    out.push(body);
    return;
  }
  const bytes = Buffer.from(body, "utf8");
  let start = 0;
  while (bytes.length - start > PIECE_BYTES) {
    let end = start + PIECE_BYTES - PIECE.length;
    // Cut before a character's first byte (not inside its continuation bytes), so every piece is valid UTF-8.
    while ((bytes[end]! & 0xc0) === 0x80) end--;
    out.push(PIECE + bytes.toString("utf8", start, end));
    start = end;
  }
  out.push(bytes.toString("utf8", start));
}

/** The bodies the elements of one list spell (pieces joined); a list ending inside a body is corrupt. */
export function fromElements(elements: string[], where: string): string[] {
  const bodies: string[] = [];
  let pending: string[] = [];
  for (const element of elements) {
    if (element.startsWith(PIECE)) {
      pending.push(element.slice(PIECE.length));
    } else if (pending.length > 0) {
      pending.push(element);
      bodies.push(pending.join(""));
      pending = [];
    } else {
      bodies.push(element);
    }
  }
  if (pending.length > 0)
    throw new SessionError("STORAGE", `Corrupt data in ${where}: a stored value ends without its last piece`);
  return bodies;
}

/** One script's share of a write: elements of the messages list, then of the usage list. */
export interface Chunk {
  messages: string[];
  usage: string[];
}

/** Splits the elements of both lists, in order, into chunks of at most {@link CHUNK_BYTES} and {@link CHUNK_ITEMS}. */
export function toChunks(messages: string[], usage: string[]): Chunk[] {
  const chunks: Chunk[] = [];
  let chunk: Chunk = { messages: [], usage: [] };
  let bytes = 0;
  let items = 0;
  const add = (element: string, list: "messages" | "usage") => {
    const size = Buffer.byteLength(element, "utf8");
    if (items > 0 && (bytes + size > CHUNK_BYTES || items >= CHUNK_ITEMS)) {
      chunks.push(chunk);
      chunk = { messages: [], usage: [] };
      bytes = 0;
      items = 0;
    }
    chunk[list].push(element);
    bytes += size;
    items++;
  };
  for (const element of messages) add(element, "messages");
  for (const element of usage) add(element, "usage");
  chunks.push(chunk);
  return chunks;
}
