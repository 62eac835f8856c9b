import type { SessionMessage } from "../../contract/message.js";
import type { TransferItem, TransferMessage } from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { describe } from "../../message/describe.js";
import { reviveMessage } from "../../message/json.js";
import { assertValidMessage } from "../../message/validate.js";
import { checkedAt } from "../../schema/to-session-error.js";
import { assertCheckpoint } from "./checkpoints.js";
import { assertTransferAttachment, assertTransferCompaction, assertTransferMessage } from "./schema.js";

/**
 * Validation of transferred records: an import accepts exactly what the write path could have stored, so a file
 * can never plant a row no append, addCompaction or setBlock would write (an id that differs from its message's,
 * a reserved `compaction_` id, a message without parts, an id with U+0000 or a lone surrogate…). Every backend's
 * importer runs these on each record before the batch holding it is written, and the CLI on every line of a file
 * before anything is written. The records are described in `store/transfer/schema.ts`; what this file adds is the
 * message a record's JSON holds, checked by the append path's own rules (`message/validate.ts`).
 */

// The message each validated record holds, so the importer does not parse its JSON a second time.
const parsed = new WeakMap<TransferMessage, SessionMessage>();

/** The message a record validated by {@link assertTransferItem} holds (createdAt revived), if it was validated. */
export function validatedMessage(record: TransferMessage): SessionMessage | undefined {
  return parsed.get(record);
}

/**
 * Throws unless an item is a record the write path could have stored: a message whose content is a valid message
 * with the record's own id and role (`INVALID_MESSAGE`, `RESERVED_ID`), or an overlay with storable ids.
 */
export function assertTransferItem(item: Exclude<TransferItem, { kind: "session" }>): void {
  if (item.kind === "attachment") assertTransferAttachment(item.attachment);
  else if (item.kind === "compaction") assertTransferCompaction(item.compaction);
  else if (item.kind === "checkpoint") assertCheckpoint(item.checkpoint);
  else assertMessageRecord(item.message);
}

// The record is described in store/transfer/schema.ts; the message its JSON holds is checked as an append checks it.
function assertMessageRecord(m: TransferMessage): void {
  assertTransferMessage(m);
  let json: unknown;
  try {
    json = JSON.parse(m.content);
  } catch {
    throw new SessionError("INVALID_MESSAGE", `Message "${m.id}" is not valid JSON`, {
      issues: [{ path: "content", rule: "format" }],
    });
  }
  const message = checkedAt("content", () => {
    const value = json;
    assertValidMessage(value);
    return value;
  });
  if (message.id !== m.id) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Record "${m.id}" holds a message whose id is ${describe(message.id)}`,
      { issues: [{ path: "content.id", rule: "conflict" }] },
    );
  }
  if (message.role !== m.role) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Record "${m.id}" says role ${describe(m.role)}, its message ${describe(message.role)}`,
      { issues: [{ path: "content.role", rule: "conflict" }] },
    );
  }
  parsed.set(m, reviveMessage(message));
}
