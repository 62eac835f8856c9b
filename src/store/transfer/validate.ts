import { SessionError } from "../../errors.js";
import { assertId, assertSessionId, assertValidMessage, describe, reviveMessage } from "../../message.js";
import type { SessionMessage } from "../../types.js";
import { assertBlockKey, assertContent, assertStoredKey } from "../keys.js";
import type { TransferItem, TransferMessage, TransferRow, TransferSession } from "../types.js";

/**
 * Validation of transferred records: an import accepts exactly what the write path could have stored, so a file
 * can never plant a row no append, addCompaction or setBlock would write (an id that differs from its message's,
 * a reserved `compaction_` id, a message without parts, an id with U+0000 or a lone surrogate…). Every backend's
 * importer runs these on each record before the batch holding it is written, and the CLI on every line of a file
 * before anything is written.
 */

// The message each validated record holds, so the importer does not parse its JSON a second time.
const parsed = new WeakMap<TransferMessage, SessionMessage>();

/** The message a record validated by {@link assertTransferItem} holds (createdAt revived), if it was validated. */
export function validatedMessage(record: TransferMessage): SessionMessage | undefined {
  return parsed.get(record);
}

const invalid = (message: string) => new SessionError("INVALID_ARGUMENT", message);

// Times travel in toISOString() form, which every backend stores and returns unchanged.
function assertTime(value: unknown, what: string): asserts value is string {
  const date = typeof value === "string" ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime()) || date.toISOString() !== value) {
    throw invalid(
      `${what} needs its time in toISOString() form (2025-01-31T12:00:00.000Z), got ${describe(value)}`,
    );
  }
}

/** Throws unless a session header names a storable session and leaf. */
export function assertTransferHeader(header: TransferSession): void {
  assertSessionId(header.id);
  if (header.leafId !== null) assertId(header.leafId, `The leaf of session "${header.id}"`);
  if (header.info !== null && header.info.id !== header.id) {
    throw invalid(
      `The registry row of session "${header.id}" names another session (${describe(header.info.id)})`,
    );
  }
}

/**
 * Throws unless an item is a record the write path could have stored: a message whose content is a valid message
 * with the record's own id and role (`INVALID_MESSAGE`, `RESERVED_ID`), or an overlay with storable ids.
 */
export function assertTransferItem(item: Exclude<TransferItem, { kind: "session" }>): void {
  if (item.kind === "attachment") {
    const { hash, bytes } = item.attachment;
    // Whether the bytes hash to the name is checked where the payload is accepted (AttachmentImport).
    if (typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash) || !(bytes instanceof Uint8Array)) {
      throw invalid(`An attachment needs a SHA-256 hex name and bytes, got ${describe(hash)}`);
    }
    return;
  }
  if (item.kind === "compaction") {
    const c = item.compaction;
    assertId(c.id, "An overlay id");
    assertId(c.fromMessageId, `The start of overlay "${c.id}"`);
    assertId(c.toMessageId, `The end of overlay "${c.id}"`);
    if (typeof c.summary !== "string") throw invalid(`Overlay "${c.id}" needs a string summary`);
    assertTime(c.createdAt, `Overlay "${c.id}"`);
    if (c.details !== undefined && (c.details === null || typeof c.details !== "object")) {
      throw invalid(`The details of overlay "${c.id}" must be an object`);
    }
    return;
  }
  const m = item.message;
  assertId(m.id, "A transferred message id");
  if (m.parentId !== null) assertId(m.parentId, `The parent of message "${m.id}"`);
  assertTime(m.createdAt, `Message "${m.id}"`);
  if (typeof m.content !== "string") throw invalid(`Message "${m.id}" needs its stored JSON as a string`);
  let message: unknown;
  try {
    message = JSON.parse(m.content);
  } catch {
    throw new SessionError("INVALID_MESSAGE", `Message "${m.id}" is not valid JSON`);
  }
  assertValidMessage(message);
  if (message.id !== m.id) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Record "${m.id}" holds a message whose id is ${describe(message.id)}`,
    );
  }
  if (message.role !== m.role) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Record "${m.id}" says role ${describe(m.role)}, its message ${describe(message.role)}`,
    );
  }
  parsed.set(m, reviveMessage(message));
}

/** Throws unless a block or entry row has storable names and string content. */
export function assertTransferRow(row: TransferRow): void {
  if (row.kind === "entry") assertStoredKey(row.label, "An entry label");
  if (row.kind === "block") assertBlockKey(row.key);
  else assertStoredKey(row.key, "An entry key");
  assertContent(row.content);
}
