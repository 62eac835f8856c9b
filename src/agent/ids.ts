import { randomUUID } from "node:crypto";
import { SessionError } from "../errors.js";

const MAX_ID_LENGTH = 200;

/** A new random id with a readable prefix, e.g. `sess_3f2a…`. */
export function newId(prefix: "sess" | "msg"): string {
  return `${prefix}_${randomUUID().replace(/-/g, "")}`;
}

/** Throws `INVALID_ARGUMENT` unless `id` is a usable session id (non-empty, at most 200 chars, no control chars). */
export function assertSessionId(id: unknown): asserts id is string {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID_LENGTH) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `A session id must be a non-empty string of at most ${MAX_ID_LENGTH} characters, got ${JSON.stringify(id)}`,
    );
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused.
  if (/[\u0000-\u001f\u007f]/.test(id)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `A session id must not contain control characters: ${JSON.stringify(id)}`,
    );
  }
}
