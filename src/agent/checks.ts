import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import type { AgentMessage, SessionPatch } from "./types.js";

/** True for a non-null, non-array object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Throws unless `appendMessages` got a list of message objects (`INVALID_MESSAGE`) and a patch with a numeric
 * `updatedAt`, an optional list of ledger entries and an optional metadata object (`INVALID_ARGUMENT`). Every
 * storage checks this before writing, so a bad call writes nothing instead of failing halfway with a TypeError.
 * Hand-written: it runs on every agent append (the hot path).
 */
export function assertAppendArgs(messages: unknown, patch: unknown): asserts patch is SessionPatch {
  if (!Array.isArray(messages) || !messages.every(isObject)) {
    throw new SessionError(
      "INVALID_MESSAGE",
      `appendMessages needs a list of messages, got ${describe(messages)}`,
      { issues: [{ path: "messages", rule: "type" }] },
    );
  }
  if (!isObject(patch) || typeof patch.updatedAt !== "number" || !Number.isFinite(patch.updatedAt)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `appendMessages needs a patch with a numeric updatedAt, got ${describe(patch)}`,
      {
        issues: [
          {
            path: isObject(patch) ? "patch.updatedAt" : "patch",
            rule: isObject(patch) && patch.updatedAt === undefined ? "required" : "type",
          },
        ],
      },
    );
  }
  if (patch.usage !== undefined && (!Array.isArray(patch.usage) || !patch.usage.every(isObject))) {
    throw new SessionError("INVALID_ARGUMENT", `patch.usage must be a list of ledger entries`, {
      issues: [{ path: "patch.usage", rule: "type" }],
    });
  }
  if (patch.metadata !== undefined && !isObject(patch.metadata)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `patch.metadata must be an object, got ${describe(patch.metadata)}`,
      { issues: [{ path: "patch.metadata", rule: "type" }] },
    );
  }
}

/** The `CONFLICT` of a create whose id is taken. */
export function alreadyExists(sessionId: string): SessionError {
  return new SessionError("CONFLICT", `Session ${sessionId} already exists: resume it instead`);
}

/** The error for stored data of the wrong shape: STORAGE, like a corrupt JSON row (see fromJson). */
export function corrupt(sessionId: string, what: string): SessionError {
  return new SessionError("STORAGE", `Corrupt data in session ${sessionId}: ${what}`);
}

/**
 * Throws {@link corrupt} unless the stored pieces of a state have the shapes a state is built from. Hand-written: it
 * checks what a backend read back (`STORAGE`), not a caller's input.
 */
export function assertStoredShape(
  sessionId: string,
  parts: { messages: unknown; entries: unknown; metadata: unknown },
): asserts parts is { messages: AgentMessage[]; entries: Record<string, unknown>[]; metadata: object } {
  if (!Array.isArray(parts.messages) || !parts.messages.every(isObject))
    throw corrupt(sessionId, "its messages are not a list of objects");
  if (!Array.isArray(parts.entries) || !parts.entries.every(isObject))
    throw corrupt(sessionId, "its usage ledger is not a list of entries");
  if (!isObject(parts.metadata)) throw corrupt(sessionId, "its metadata is not an object");
}
