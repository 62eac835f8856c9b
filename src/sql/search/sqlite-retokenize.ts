/**
 * Re-indexes rows indexed in another form than today's: Chinese, Japanese and Korean text was one token per run
 * until runs were indexed in character pairs (search/cjk.ts), and owned sessions' rows had no owner token until
 * owners were kept inside the index (owner-index.ts), so such rows are found by today's queries only once they are
 * indexed again. Schema steps run these once, inside their transaction (schema.ts); a registration with an owner
 * runs the second for its session.
 */
import { parseMessage } from "../../message/json.js";
import { messageText } from "../../message/text.js";
import { CJK_RANGES, hasCjk } from "../../search/cjk.js";
import { entryText, searchableText } from "../../search/tokens.js";
import { isSealed } from "../../store/crypto/seal.js";
import { contentSql, storedText } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { freeTextSql, readFreeText, sqlText } from "../engines/sqlite/free-text.js";
import { indexText } from "./sqlite-indexing.js";

/** A GLOB that matches any text that may hold CJK characters. */
export const CJK_GLOB = `*[${CJK_RANGES}]*`;

// Rows read per statement: a store of Chinese conversations, or of one owner's, may need every row indexed again.
const BATCH = 1000;

/**
 * Indexes again, as today's tokenizer splits them, the indexed messages and the search-block entries whose text
 * holds CJK characters, a batch of rows at a time. Only rows that may hold such text are read: not plain ASCII (a
 * length check in characters against bytes, far cheaper than the pattern) and matching the GLOB, or split over
 * chunks or stored as bytes, which it cannot see into. Call inside a write transaction; returns the rows indexed.
 */
export function retokenizeCjk(driver: SqlDriver, batch = BATCH): number {
  let count = 0;
  for (let after = 0; ; ) {
    const rows = driver.all<{ seq: number; session_num: number; content: unknown }>(
      `SELECT seq, session_num, ${contentSql()} AS content FROM agent_messages
       WHERE seq > ? AND seq <= (SELECT indexed_seq FROM agent_search_state WHERE id = 1)
         AND (chunks > 0 OR typeof(content) = 'blob'
           OR (length(content) <> length(CAST(content AS BLOB)) AND content GLOB ?))
       ORDER BY seq LIMIT ?`,
      [after, CJK_GLOB, batch],
    );
    for (const row of rows) {
      const content = storedText(driver, row.content);
      if (isSealed(content)) continue; // never indexed (search/indexing.ts afterInsert)
      const message = parseMessage(content);
      const text = message ? messageText(message) : "";
      if (!hasCjk(text)) continue;
      driver.run("DELETE FROM agent_messages_fts WHERE rowid = ?", [row.seq]);
      // No owner: the step runs before owners existed, and the owners' step indexes their rows again after it.
      indexText(driver, row.seq, row.session_num, text, false, null);
      count++;
    }
    if (rows.length < batch) break;
    after = rows[rows.length - 1]!.seq;
  }
  // Entries are few (search blocks a model writes): one read.
  const entries = driver.all<{ seq: number; key: unknown; content: unknown; content_encoded: unknown }>(
    `SELECT seq, CAST(key AS BLOB) AS key, ${freeTextSql("content", "content")} FROM agent_search_entries
     WHERE typeof(content) = 'blob' OR key GLOB ? OR content GLOB ?`,
    [CJK_GLOB, CJK_GLOB],
  );
  for (const row of entries) {
    const text = entryText(sqlText(row.key), readFreeText(row.content, row.content_encoded));
    if (!hasCjk(text)) continue;
    driver.run("DELETE FROM agent_search_entries_fts WHERE rowid = ?", [row.seq]);
    driver.run("INSERT INTO agent_search_entries_fts (rowid, text) VALUES (?, ?)", [
      row.seq,
      searchableText(text),
    ]);
    count++;
  }
  return count;
}

/**
 * Indexes again, with their owner's token, the indexed messages of owned sessions: of the session registered as
 * `sessionId` (a registration with an owner of a session that holds messages already: bounded by that session),
 * or of every owned session (the schema step that brought owner tokens). Pending messages get the token when
 * their batch is indexed. Call inside a write transaction; returns the rows indexed again.
 */
export function retokenizeOwned(driver: SqlDriver, sessionId?: string): number {
  const scope = sessionId === undefined ? "s.owner IS NOT NULL" : "s.id = ? AND s.owner IS NOT NULL";
  let count = 0;
  for (let after = 0; ; ) {
    const rows = driver.all<{ seq: number; session_num: number; owner: string; content: unknown }>(
      `SELECT m.seq, m.session_num, s.owner, ${contentSql("m")} AS content FROM agent_sessions s
       JOIN agent_session_heads h ON h.session_id = s.id JOIN agent_messages m ON m.session_num = h.num
       WHERE ${scope} AND m.seq > ? AND m.seq <= (SELECT indexed_seq FROM agent_search_state WHERE id = 1)
       ORDER BY m.seq LIMIT ?`,
      [...(sessionId === undefined ? [] : [sessionId]), after, BATCH],
    );
    for (const row of rows) {
      const content = storedText(driver, row.content);
      if (isSealed(content)) continue; // never indexed (search/indexing.ts afterInsert)
      const message = parseMessage(content);
      driver.run("DELETE FROM agent_messages_fts WHERE rowid = ?", [row.seq]);
      if (message) indexText(driver, row.seq, row.session_num, messageText(message), false, row.owner);
      count++;
    }
    if (rows.length < BATCH) return count;
    after = rows[rows.length - 1]!.seq;
  }
}
