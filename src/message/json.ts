// A message as stored: the JSON every backend writes and the parse every read uses, so a message reads back from
// any store the same (createdAt a Date; a corrupt row null, never a crash).

import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { findLossyValue, type LossyValue, lossyAdvice } from "../lossy-json.js";
import { ISO_DATE_TIME } from "./created-at.js";

/**
 * Serialises a message for storage; throws `INVALID_MESSAGE` when it is not JSON-serialisable or holds a value JSON
 * stores without its data (a Map, a Set, an ArrayBuffer or typed array: see lossy-json.ts).
 */
export function serializeMessage(message: SessionMessage): string {
  let json: string;
  let lossy: LossyValue | null;
  try {
    json = JSON.stringify(message);
    lossy = findLossyValue(message, json);
  } catch (cause) {
    throw new SessionError("INVALID_MESSAGE", `Message "${message.id}" cannot be serialised to JSON`, {
      cause,
      issues: [{ path: "", rule: "invalid" }],
    });
  }
  // Stored, a Map or an ArrayBuffer would read back as {}: refused, never silently changed.
  if (lossy) {
    // The issue's path is dotted like every other (`parts.0.data`); the message keeps `parts[0].data` for people.
    throw new SessionError("INVALID_MESSAGE", `Message "${message.id}" holds ${lossyAdvice(lossy)}`, {
      issues: [{ path: dotted(lossy.path), rule: "type" }],
    });
  }
  return json;
}

// A lossy value's path as an issue's (`parts[0].data["a b"]` is `parts.0.data.a b`).
function dotted(path: string): string {
  return path
    .replace(
      /\[(?:(\d+)|("(?:[^"\\]|\\.)*"))\]/g,
      (_, index?: string, key?: string) => `.${index ?? (JSON.parse(key ?? '""') as string)}`,
    )
    .replace(/^\./, "");
}

/**
 * What sealed content (an encrypted owner's message, store/crypto/seal.ts) starts with, in every version of its
 * format (`~sealed1:`, `~sealed2:`). No message JSON starts with `~` (it is an object), so a row tells by itself
 * whether it is sealed.
 */
export const SEALED_PREFIX = "~sealed";

/**
 * True when stored content is sealed (see {@link SEALED_PREFIX}): a mark test every store makes, with a keyring or
 * without (one without refuses or skips a row another process sealed), so it runs no encryption code.
 */
export function isSealed(content: string): boolean {
  return content.startsWith(SEALED_PREFIX);
}

/**
 * Parses a stored row back into a message (`createdAt` revived as a Date); null when the row is corrupt.
 * `DECRYPT_FAILED` for sealed content a read did not open: never read as a corrupt row, skipped in silence.
 */
export function parseMessage(json: string): SessionMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    if (json.startsWith(SEALED_PREFIX)) {
      throw new SessionError("DECRYPT_FAILED", "An encrypted message was read without its owner's key");
    }
    return null;
  }
  return hasMessageFields(value) ? reviveMessage(value) : null;
}

/** True when parsed JSON has what every read needs (a string id and role, an array of parts): a readable row. */
export function hasMessageFields(value: unknown): value is SessionMessage {
  if (value === null || typeof value !== "object") return false;
  const { id, role, parts } = value as Record<string, unknown>;
  return typeof id === "string" && typeof role === "string" && Array.isArray(parts);
}

/** Revives a parsed message's `createdAt` as a Date, as every read returns it. @internal */
export function reviveMessage(message: SessionMessage): SessionMessage {
  // Only an ISO-8601 date-time is revived: `new Date("1")` would turn any digits into a date (2001).
  if (typeof message.createdAt === "string" && ISO_DATE_TIME.test(message.createdAt)) {
    const date = new Date(message.createdAt);
    if (!Number.isNaN(date.getTime())) message.createdAt = date;
  }
  return message;
}
