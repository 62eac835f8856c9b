/**
 * Re-indexes what an older release indexed with another tokenizer: Chinese, Japanese and Korean text was one token
 * per run until runs were indexed in character pairs (search/cjk.ts), so such rows are found by today's queries
 * only once they are indexed again. A schema step runs this once, inside its transaction (schema.ts).
 */
import { parseMessage } from "../../message/json.js";
import { messageText } from "../../message/text.js";
import { CJK_BLOCKS, hasCjk } from "../../search/cjk.js";
import { entryText, searchableText } from "../../search/query.js";
import { contentSql, resolveContent } from "../chunks.js";
import type { SqlDriver } from "../connection/driver.js";
import { freeTextSql, readFreeText, sqlText } from "../connection/free-text.js";
import { indexText } from "./indexing.js";

/** A GLOB that matches any text holding a character of {@link CJK_BLOCKS}. */
export const CJK_GLOB = `*[${CJK_BLOCKS.map(([from, to]) => `${String.fromCodePoint(from)}-${String.fromCodePoint(to)}`).join("")}]*`;

/**
 * Indexes again, as today's tokenizer splits them, the indexed messages and the search-block entries whose text
 * holds CJK characters. Only rows the database's GLOB picks out are read (and those split over chunks or stored
 * as bytes, which it cannot see into). Call inside a write transaction.
 */
export function retokenizeCjk(driver: SqlDriver): number {
  let count = 0;
  const messages = driver.all<{ seq: number; session_num: number; content: unknown }>(
    `SELECT seq, session_num, ${contentSql()} AS content FROM agent_messages
     WHERE seq <= (SELECT indexed_seq FROM agent_search_state WHERE id = 1)
       AND (chunks > 0 OR typeof(content) = 'blob' OR content GLOB ?)`,
    [CJK_GLOB],
  );
  for (const row of messages) {
    const message = parseMessage(resolveContent(driver, row.content));
    const text = message ? messageText(message) : "";
    if (!hasCjk(text)) continue;
    driver.run("DELETE FROM agent_messages_fts WHERE rowid = ?", [row.seq]);
    indexText(driver, row.seq, row.session_num, text);
    count++;
  }
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
