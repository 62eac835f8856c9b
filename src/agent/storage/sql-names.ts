import { SessionError } from "../../errors.js";

/** Default prefix of the SQL tables; distinct from the core store's `agent_*` tables so both fit in one database. */
export const DEFAULT_TABLE_PREFIX = "agent_chat_";

/** Throws `INVALID_ARGUMENT` unless `prefix` is safe to splice into SQL as part of a table name. */
export function assertTablePrefix(prefix: string): void {
  if (typeof prefix !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(prefix)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `tablePrefix must be letters, digits and "_" (not starting with a digit), got ${JSON.stringify(prefix)}`,
    );
  }
}
