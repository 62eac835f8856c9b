/**
 * The overlay summaries of a key rotation on SQLite (rekey.ts): an owner has few of them (one per compaction), so
 * they are re-sealed under the current key in the rotation's final transaction, before it checks that no row of
 * the owner names another key.
 */
import { SessionError } from "../errors.js";
import { sealedStart } from "../store/crypto/seal.js";
import type { SqlDriver } from "./connection/driver.js";

interface SummaryRow {
  seq: number;
  id: string;
  session_id: string;
  summary: string;
}

// Only TEXT values are sealed: clear text that starts like sealed content is stored as a BLOB (free-text.ts).
const UNDER_OTHER_KEYS = `SELECT c.seq, c.id, h.session_id, c.summary
  FROM agent_sessions s JOIN agent_session_heads h ON h.session_id = s.id
  JOIN agent_compactions c ON c.session_num = h.num
  WHERE s.owner = ? AND typeof(c.summary) = 'text' AND c.summary GLOB '~sealed*' AND substr(c.summary, 1, ?) <> ?`;

/** Re-seals `owner`'s sealed summaries not under the key `id` (inside the caller's transaction); answers how many. */
export function resealSummaries(driver: SqlDriver, owner: string, id: string): number {
  const keys = driver.keys;
  const start = sealedStart(id);
  const rows = driver.all<SummaryRow>(UNDER_OTHER_KEYS, [owner, start.length, start]);
  for (const row of rows) {
    const summary = keys!.open(row.session_id, row.summary, row.id, "overlay");
    const sealed = keys!.sealSummary(row.session_id, row.id, summary);
    if (!sealed?.startsWith(start)) {
      throw new SessionError(
        "CONFLICT",
        `The keyring's key for session "${row.session_id}" changed during a rotation`,
      );
    }
    driver.run("UPDATE agent_compactions SET summary = ? WHERE seq = ?", [sealed, row.seq]);
  }
  return rows.length;
}
