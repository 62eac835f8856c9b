import { SessionError } from "../errors.js";

/**
 * One session as the agent runtime's old SQL storages (`SQLiteSessionStorage` / `PostgresSessionStorage` before
 * agent sessions moved into the store) wrote it: JSON bodies, media already restored from the old attachment table.
 */
export interface LegacyAgentSession {
  id: string;
  parentId: string | null;
  /** JSON of the metadata object. */
  metadata: string;
  createdAt: number;
  updatedAt: number;
  /** Message JSON in order. */
  messages: string[];
  /** Ledger entry JSON in order. */
  usage: string[];
}

/** The old storages' default table prefix. */
export const LEGACY_AGENT_PREFIX = "agent_chat_";

/** Throws `INVALID_ARGUMENT` unless `prefix` is safe to splice into SQL as part of a table name. */
export function assertLegacyPrefix(prefix: string): void {
  if (typeof prefix !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(prefix)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `tablePrefix must be letters, digits and "_" (not starting with a digit), got ${JSON.stringify(prefix)}`,
    );
  }
}
