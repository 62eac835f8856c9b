/**
 * Owners inside the SQLite search index (store/owner.ts ownerHash): the `sid` column of an owned session's indexed
 * message holds the owner's token beside the session's, so an owner's search is `sid : "<token>"` ANDed with the
 * match, as one session's search is (state.ts). The token starts `s0`, which no session token does (`s` and a
 * number from 1), and is as rare a word root as the session tokens fts5vocab lists beside it (family-cache.ts).
 */

import { ownerHash } from "../../store/owner.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

/** The token that stands for `owner` in the `sid` column. */
export function ownerToken(owner: string): string {
  return `s0${ownerHash(owner)}`;
}

/** The `sid` column of a message of session `sessionNum`, owned by `owner` (null: by none). */
export function sidTokens(sessionNum: number, owner: string | null): string {
  return owner === null ? `s${sessionNum}` : `s${sessionNum} ${ownerToken(owner)}`;
}

/** The owner of the session whose head is `sessionNum` (null: none, or not registered): two key lookups. */
export function ownerOfSession(driver: SqlDriver, sessionNum: number): string | null {
  const row = driver.get<{ owner: string | null }>(
    `SELECT s.owner FROM agent_session_heads h JOIN agent_sessions s ON s.id = h.session_id WHERE h.num = ?`,
    [sessionNum],
  );
  return row?.owner ?? null;
}
