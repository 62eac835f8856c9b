/**
 * A session's erasure in SQLite: counts what goes, then deletes it, inside the caller's write transaction (one
 * per session, so a reader sees the whole session or none of it, and a crash rolls the session back whole).
 */
import { countsOf, type ErasureCounts } from "../store/erasure.js";
import type { SqlDriver } from "./connection/driver.js";
import { deleteKeyed } from "./context-records.js";
import { STORE_TABLES } from "./media/tables.js";
import { forgetStream } from "./streams.js";
import { deleteSessionContent } from "./writes.js";

const TABLE_PRESENT = "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ?";

// The payloads linked by the session's messages that no message of another session links: what its release frees.
const FREED_PAYLOADS = `SELECT count(DISTINCT l.hash) AS n FROM ${STORE_TABLES.links} l
  WHERE l.message_seq IN (SELECT seq FROM agent_messages WHERE session_num = ?)
    AND NOT EXISTS (SELECT 1 FROM ${STORE_TABLES.links} o WHERE o.hash = l.hash
      AND o.message_seq NOT IN (SELECT seq FROM agent_messages WHERE session_num = ?))`;

/** @internal a session's change-log rows: one range of the log's session index (feed/change-log.ts). */
export const ERASE_CHANGES = "DELETE FROM agent_changes WHERE session_id = ? RETURNING 1 AS gone";

function present(driver: SqlDriver, table: string): boolean {
  return driver.get(TABLE_PRESENT, [table]) !== undefined;
}

function count(driver: SqlDriver, sql: string, params: (string | number)[]): number {
  return Number(driver.get<{ n: number | bigint }>(sql, params)?.n ?? 0);
}

/**
 * Erases session `id` (head `num`, when it has stored data): its messages (their search rows, vectors and payload
 * links with them), overlays, head, every block and entry recorded for it, the unrecorded blocks of `keys` and
 * entries filed under `keys`, its change-log rows and its registry row. Answers the counts; the caller logs `erased` after it.
 */
export function eraseSession(
  driver: SqlDriver,
  id: string,
  num: number | undefined,
  keys: readonly string[],
): ErasureCounts {
  const counts = countsOf(undefined);
  if (num !== undefined) {
    counts.messages = count(driver, "SELECT count(*) AS n FROM agent_messages WHERE session_num = ?", [num]);
    counts.compactions = count(driver, "SELECT count(*) AS n FROM agent_compactions WHERE session_num = ?", [
      num,
    ]);
    if (present(driver, "agent_message_vectors")) {
      counts.vectors = count(
        driver,
        "SELECT count(*) AS n FROM agent_message_vectors WHERE session_num = ?",
        [num],
      );
    }
    counts.attachments = count(driver, FREED_PAYLOADS, [num, num]);
    deleteSessionContent(driver, num);
    driver.run("DELETE FROM agent_session_heads WHERE num = ?", [num]);
  }
  forgetStream(driver, id); // a running answer's chunks go with the session
  const context = deleteKeyed(driver, id, keys);
  counts.blocks = context.blocks;
  counts.entries = context.entries;
  if (present(driver, "agent_changes")) {
    counts.changes = driver.all(ERASE_CHANGES, [id]).length;
  }
  counts.sessions = driver.all("DELETE FROM agent_sessions WHERE id = ? RETURNING 1 AS gone", [id]).length;
  return counts;
}
