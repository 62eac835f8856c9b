import { SessionError } from "./errors.js";
import { describe } from "./message/describe.js";

/**
 * An options argument of the public API: `undefined` and `null` both mean "none" (JavaScript callers pass either),
 * anything but an object is refused with `INVALID_ARGUMENT` instead of failing later on a property read.
 */
export function optionsArg<T extends object>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) return {} as T;
  if (typeof value !== "object") {
    throw new SessionError("INVALID_ARGUMENT", `${what} options must be an object, got ${describe(value)}`, {
      issues: [{ path: "options", rule: "type" }],
    });
  }
  return value;
}
