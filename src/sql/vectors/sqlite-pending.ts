/**
 * The messages the vector channel has to embed on SQLite: those without a vector, or whose text changed since it
 * was embedded, with the text to embed and the stored vector's text hash (a text embedded already is kept). The
 * Postgres twin is src/sql/vectors/postgres-pending.ts.
 */
import { storedMessageText } from "../../message/text.js";
import type { PendingText } from "../../search/vectors/types.js";
import { isSealed } from "../../store/crypto/seal.js";
import { contentSql, storedText } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { CURRENT } from "./sqlite-schema.js";

const PENDING_SELECT = `SELECT m.seq, m.session_num, ${contentSql("m")} AS content, m.content_hash,
  CASE WHEN v.session_num = m.session_num THEN v.text_hash END AS stored
  FROM agent_messages m LEFT JOIN agent_message_vectors v ON v.seq = m.seq`;

type PendingRow = [number, number, unknown, string | null, string | null];

function pendingRows(driver: SqlDriver, rows: PendingRow[]): PendingText[] {
  return rows.map(([seq, session, content, contentHash, stored]) => {
    const raw = storedText(driver, content);
    // An encrypted owner's message gets no vector (its text would reach the embedder and the vector table): its
    // empty text is recorded as embedded, so it is not pending again.
    return {
      seq,
      session,
      text: isSealed(raw) ? "" : storedMessageText(raw),
      contentHash,
      storedTextHash: stored,
    };
  });
}

/** The pending messages after seq `after`, at most `limit`, oldest first. */
export function pendingAfter(driver: SqlDriver, after: number, limit: number): PendingText[] {
  return pendingRows(
    driver,
    driver.tuples<PendingRow>(
      `${PENDING_SELECT} WHERE m.seq > ? AND (v.seq IS NULL OR NOT (${CURRENT})) ORDER BY m.seq LIMIT ?`,
      [after, limit],
    ),
  );
}

/** The pending messages among `ids` of the session numbered `num`, oldest first. */
export function pendingAmong(driver: SqlDriver, num: number, ids: readonly string[]): PendingText[] {
  return pendingRows(
    driver,
    driver.tuples<PendingRow>(
      `${PENDING_SELECT} WHERE m.session_num = ? AND m.id IN (${ids.map(() => "?").join(",")})
       AND (v.seq IS NULL OR NOT (${CURRENT})) ORDER BY m.seq`,
      [num, ...ids],
    ),
  );
}
