// The shape a message must have to be stored: checked by hand on every append, upsert, update and import (the
// hot path: no schema, no allocation beyond the error), so a row no read could use is refused before it is written.

import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { EARLIEST_TIME, isBeforeEarliest, isValidCreatedAt } from "./created-at.js";
import { describe } from "./describe.js";
import { fitsBytes, isStorableId, MAX_NAME_BYTES } from "./ids.js";
import { COMPACTION_PREFIX } from "./overlay.js";

/** Throws `INVALID_MESSAGE` / `RESERVED_ID` unless `message` can be stored (updates and imports). */
export function assertValidMessage(message: unknown): asserts message is SessionMessage {
  assertMessageShape(message);
  if (message.id.startsWith(COMPACTION_PREFIX)) {
    throw new SessionError(
      "RESERVED_ID",
      `Message id "${message.id}" is reserved: ids starting with "${COMPACTION_PREFIX}" name compaction overlays`,
      { issues: [{ path: "id", rule: "invalid" }] },
    );
  }
}

/**
 * Throws `INVALID_MESSAGE` unless `message` is a well-formed message. Appends and upserts check only this: an
 * overlay id (`compaction_…`) there is an echo of a read, which they ignore (see {@link isEchoedOverlay}).
 */
export function assertMessageShape(message: unknown): asserts message is SessionMessage {
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    throw new SessionError("INVALID_MESSAGE", `A message must be an object, got ${describe(message)}`, {
      issues: [{ path: "", rule: "type" }],
    });
  }
  assertOwnFields(message);
  const { id, role, parts } = message as Record<string, unknown>;
  if (typeof id !== "string" || id.length === 0) {
    // The AI SDK's onFinish hands over a responseMessage with id "" unless the response was given an id generator.
    const hint =
      id === ""
        ? " (an AI SDK responseMessage has an id only when toUIMessageStreamResponse gets generateMessageId; " +
          "persistChatTurn's turn.streamOptions sets it)"
        : "";
    throw new SessionError(
      "INVALID_MESSAGE",
      `A message needs a non-empty string id, got ${describe(id)}${hint}`,
      {
        issues: [
          { path: "id", rule: id === undefined ? "required" : typeof id === "string" ? "format" : "type" },
        ],
      },
    );
  }
  if (typeof role !== "string" || role.length === 0) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${id}" needs a non-empty string role, got ${describe(role)}`,
      {
        issues: [
          {
            path: "role",
            rule: role === undefined ? "required" : typeof role === "string" ? "format" : "type",
          },
        ],
      },
    );
  }
  if (!Array.isArray(parts)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${id}" needs an array of parts, got ${describe(parts)}`,
      { issues: [{ path: "parts", rule: parts === undefined ? "required" : "type" }] },
    );
  }
  // An id or role that could not round-trip on every backend is refused everywhere (see isStorableId).
  if (!isStorableId(id) || !isStorableId(role)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message id and role must be well-formed Unicode without U+0000 (message ${describe(id)})`,
      { issues: [{ path: isStorableId(id) ? "role" : "id", rule: "format" }] },
    );
  }
  if (!fitsBytes(id, MAX_NAME_BYTES)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `A message id must be at most ${MAX_NAME_BYTES} bytes in UTF-8, got ${describe(id)} (${id.length} characters)`,
      { issues: [{ path: "id", rule: "too_long" }] },
    );
  }
  // JSON.stringify would store whatever toJSON returns (`toJSON: () => 1` stores "1", a row no read can parse):
  // a message is serialised as the object it is, so a toJSON on it is refused rather than obeyed.
  if (typeof (message as { toJSON?: unknown }).toJSON === "function") {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${id}" must not define toJSON: it is stored as it is`,
      { issues: [{ path: "toJSON", rule: "invalid" }] },
    );
  }
  const { createdAt } = message as { createdAt?: unknown };
  if (createdAt !== undefined && !isValidCreatedAt(createdAt)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${id}" needs createdAt as a valid Date or an ISO-8601 date-time string, got ${describe(createdAt)}`,
      {
        issues: [
          {
            path: "createdAt",
            rule: typeof createdAt === "string" || createdAt instanceof Date ? "format" : "type",
          },
        ],
      },
    );
  }
  if (createdAt !== undefined && isBeforeEarliest(createdAt)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message "${id}" has a createdAt before ${EARLIEST_TIME} (4713 BC), the earliest time every store holds`,
      { issues: [{ path: "createdAt", rule: "range" }] },
    );
  }
}

// The fields every read needs. JSON.stringify (how a message is stored) writes own enumerable properties only.
const REQUIRED_FIELDS = ["id", "role", "parts"] as const;

/**
 * Throws `INVALID_MESSAGE` when a required field is present but inherited or non-enumerable: it would pass the
 * checks, yet the stored JSON would lack it (`Object.create({ id, role, parts })` was stored as "{}").
 */
function assertOwnFields(message: object): void {
  for (const field of REQUIRED_FIELDS) {
    if (field in message && !Object.prototype.propertyIsEnumerable.call(message, field)) {
      throw new SessionError(
        "INVALID_MESSAGE",
        `A message's "${field}" must be its own enumerable property (inherited or hidden fields are not stored)`,
        { issues: [{ path: field, rule: "invalid" }] },
      );
    }
  }
}
