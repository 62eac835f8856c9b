import type {
  TransferCheckpoint,
  TransferItem,
  TransferMessage,
  TransferSession,
} from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { parseMessage } from "../../message/json.js";
import { messageText } from "../../message/text.js";
import { estimateMessageTokens } from "../../message/tokens.js";
import { utf8Length } from "../../runtime/bytes.js";
import { offloadJson } from "../media/offload.js";
import { assertTransferHeader } from "./schema.js";
import { assertTransferItem, validatedMessage } from "./validate.js";

/**
 * Orders strings by their UTF-8 bytes, the order SQLite's BINARY collation and Postgres' `COLLATE "C"` use, so
 * every backend lists ids identically (JavaScript's `<` compares UTF-16 units, which differs above U+FFFF).
 */
export { compareUtf8 } from "../../runtime/bytes.js";

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
      { issues: [{ path: "", rule: "required" }] },
    );
  }
  const header = first.value.session;
  assertTransferHeader(header);
  return { header, rest };
}

/**
 * Groups the remaining items into arrays of at most `size`, so a backend writes one transaction per batch: fast,
 * and memory stays bounded however long the session is. A second header inside the stream is an error. Checkpoints
 * (last in a stream) are handed to `checkpoint` as they come, each written in a transaction of its own.
 */
export async function* batches(
  rest: AsyncIterator<TransferItem>,
  size: number,
  checkpoint: (c: TransferCheckpoint) => Promise<void>,
): AsyncGenerator<Exclude<TransferItem, { kind: "session" | "checkpoint" }>[]> {
  let batch: Exclude<TransferItem, { kind: "session" | "checkpoint" }>[] = [];
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    const item = next.value;
    if (item.kind === "checkpoint") {
      // The messages before it are written first: a batch is never held across a checkpoint's write.
      if (batch.length > 0) yield batch;
      batch = [];
      await checkpoint(item.checkpoint);
      continue;
    }
    if (item.kind === "session") {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "A session's transfer stream holds a second session header",
        { issues: [{ path: "", rule: "invalid" }] },
      );
    }
    // Each record is validated before the batch holding it is written (a bad one writes nothing of its batch).
    assertTransferItem(item);
    if (item.kind === "message") batch.push(...offloadTransferMessage(item.message));
    else batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * A transferred message as it is stored: inline media (a file written by another tool, an export of a version
 * that stored media inline) is offloaded as an append would, so the message goes in after `attachment` items for
 * its payloads and keeps pointers. Pointers it already holds (an export's) stay, and a message without inline
 * media is the record itself, byte for byte.
 */
export function offloadTransferMessage(
  message: TransferMessage,
): Extract<TransferItem, { kind: "attachment" | "message" }>[] {
  const { content, attachments } = offloadJson(message.content, { keepPointers: true });
  if (attachments.length === 0) return [{ kind: "message", message }];
  return [
    ...attachments.map((attachment) => ({ kind: "attachment" as const, attachment })),
    { kind: "message", message: { ...message, content } },
  ];
}

/** What a backend derives from a transferred message: the same role, search text, size and token estimate as an append. */
export function messageFacts(message: TransferMessage): {
  role: string;
  text: string;
  bytes: number;
  tokens: number;
} {
  const parsed = validatedMessage(message) ?? parseMessage(message.content);
  // Imported records were validated (validate.ts); a corrupt row only reaches here from an export.
  return {
    role: parsed?.role ?? message.role,
    text: parsed ? messageText(parsed) : "",
    bytes: utf8Length(message.content),
    tokens: parsed ? estimateMessageTokens([parsed]) : 0,
  };
}

/** Throws unless a transferred message is one the write path could have stored (see validate.ts). */
export function assertTransferMessage(message: TransferMessage): void {
  if (validatedMessage(message) === undefined) assertTransferItem({ kind: "message", message });
}
