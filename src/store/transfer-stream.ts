import { SessionError } from "../errors.js";
import { isCompactionMessage, messageText, parseMessage, utf8Length } from "../message.js";
import { estimateMessageTokens } from "../utils/tokens.js";
import type { TransferItem, TransferMessage, TransferSession } from "./types.js";

/**
 * Orders strings by their UTF-8 bytes, the order SQLite's BINARY collation and Postgres' `COLLATE "C"` use, so
 * every backend lists ids identically (JavaScript's `<` compares UTF-16 units, which differs above U+FFFF).
 */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** The header of a session's transfer stream and an iterator over the items after it. */
export async function openSessionStream(
  items: AsyncIterable<TransferItem>,
): Promise<{ header: TransferSession; rest: AsyncIterator<TransferItem> }> {
  const rest = items[Symbol.asyncIterator]();
  const first = await rest.next();
  if (first.done || first.value.kind !== "session") {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "A session's transfer stream must start with its session header",
    );
  }
  const header = first.value.session;
  if (typeof header.id !== "string") {
    throw new SessionError("INVALID_ARGUMENT", "A transferred session needs a string id");
  }
  return { header, rest };
}

/**
 * Groups the remaining items into arrays of at most `size`, so a backend writes one transaction per batch: fast,
 * and memory stays bounded however long the session is. A second header inside the stream is an error.
 */
export async function* batches(
  rest: AsyncIterator<TransferItem>,
  size: number,
): AsyncGenerator<Exclude<TransferItem, { kind: "session" }>[]> {
  let batch: Exclude<TransferItem, { kind: "session" }>[] = [];
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    const item = next.value;
    if (item.kind === "session") {
      throw new SessionError("INVALID_ARGUMENT", "A session's transfer stream holds a second session header");
    }
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** What a backend derives from a transferred message: the same role, search text, size and token estimate as an append. */
export function messageFacts(message: TransferMessage): {
  role: string;
  text: string;
  bytes: number;
  tokens: number;
} {
  const parsed = parseMessage(message.content);
  // A corrupt stored row travels verbatim; it stays unreadable (skipped by history) but keeps its place in the tree.
  return {
    role: parsed?.role ?? message.role,
    text: parsed ? messageText(parsed) : "",
    bytes: utf8Length(message.content),
    tokens: parsed ? estimateMessageTokens([parsed]) : 0,
  };
}

/** Throws `INVALID_ARGUMENT` unless a transferred message names itself and its parent with usable ids. */
export function assertTransferMessage(message: TransferMessage): void {
  if (typeof message.id !== "string" || message.id.length === 0) {
    throw new SessionError("INVALID_ARGUMENT", "A transferred message needs a non-empty id");
  }
  if (isCompactionMessage(message)) {
    throw new SessionError("RESERVED_ID", `Message id "${message.id}" is reserved for compaction overlays`);
  }
  if (message.parentId !== null && (typeof message.parentId !== "string" || message.parentId.length === 0)) {
    throw new SessionError("INVALID_ARGUMENT", `Message "${message.id}" has an invalid parent id`);
  }
  if (typeof message.content !== "string" || typeof message.createdAt !== "string") {
    throw new SessionError("INVALID_ARGUMENT", `Message "${message.id}" needs string content and createdAt`);
  }
}
