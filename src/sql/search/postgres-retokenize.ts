/**
 * Re-indexes what an older release indexed with another tokenizer: Chinese, Japanese and Korean text was one
 * lexeme per run until runs were indexed in character pairs (search/cjk.ts). A schema step runs this once, inside
 * its transaction (schema.ts); SQLite's twin is sql/search/sqlite-retokenize.ts.
 */
import { parseMessage } from "../../message/json.js";
import { messageText } from "../../message/text.js";
import { CJK_RANGES, hasCjk } from "../../search/cjk.js";
import { entryText } from "../../search/tokens.js";
import { isSealed } from "../../store/crypto/seal.js";
import type { Query } from "../engines/postgres/client.js";
import { sessionLexeme, toTsvector } from "../engines/postgres/fts.js";
import type { Layout } from "../engines/postgres/layout.js";
import { decodeContent } from "../engines/postgres/text.js";

/** A regular expression matching any text that may hold CJK characters. */
const CJK_PATTERN = `[${CJK_RANGES}]`;
// Rows read and written back per statement: a store of Chinese conversations may need every row again.
const BATCH = 1000;

/**
 * Writes again, as today's tokenizer splits them, the search vectors of the messages and search-block entries
 * whose text holds CJK characters, a batch at a time. Only rows that may hold such text are read: not plain ASCII
 * (bytes against characters, cheaper than the pattern) and matching the server's regular expression.
 */
export async function retokenizeCjk(
  query: Query,
  t: { messages: string; heads: string; entries: string; layout: Layout },
  batch = BATCH,
): Promise<void> {
  // Distributed messages carry their session id (citus/distribute.ts), and Citus refuses the join to the heads by
  // number, which is not the distribution column. A store opened distributed migrates its tables before it
  // distributes them, so the column, not the option, says which.
  const routed = t.layout.rowsCarrySession && (await hasSessionColumn(query, t.messages));
  const from = routed ? `${t.messages} m` : `${t.messages} m JOIN ${t.heads} h ON h.num = m.session_num`;
  const session = routed ? "m.session_id" : "h.session_id";
  for (let after = "0"; ; ) {
    const messages = await query<{ seq: string; content: string; session_id: string }>(
      `SELECT m.seq, m.content, ${session} AS session_id FROM ${from}
       WHERE m.seq > $1 AND octet_length(m.content) <> char_length(m.content) AND m.content ~ $2
       ORDER BY m.seq LIMIT $3`,
      [after, CJK_PATTERN, batch],
    );
    const updates: { seq: string; sessionId: string; search: string | null }[] = [];
    for (const row of messages) {
      // An encrypted owner's message is indexed as blind tokens (stored-form.ts), always by today's tokenizer
      // (sealing came after this step), and this process may not hold the owner's key.
      if (isSealed(row.content)) continue;
      const message = parseMessage(row.content);
      const text = message ? messageText(message) : "";
      if (hasCjk(text))
        updates.push({
          seq: row.seq,
          sessionId: row.session_id,
          search: toTsvector(text, sessionLexeme(row.session_id)),
        });
    }
    await writeBack(query, t.messages, routed, updates);
    if (messages.length < batch) break;
    after = messages[messages.length - 1]!.seq;
  }
  // Entries are few (search blocks a model writes): one read; written back by their key, (label, key).
  const entries = await query<{ label: string; key: string; content: string; content_json: boolean }>(
    `SELECT label, key, content, content_json FROM ${t.entries} WHERE key ~ $1 OR content ~ $1`,
    [CJK_PATTERN],
  );
  const changed = entries.flatMap((row) => {
    const text = entryText(row.key, decodeContent(row.content, row.content_json));
    return hasCjk(text) ? [{ label: row.label, key: row.key, search: toTsvector(text) }] : [];
  });
  for (let i = 0; i < changed.length; i += batch) {
    const part = changed.slice(i, i + batch);
    await query(
      `UPDATE ${t.entries} x SET search = u.search::tsvector
       FROM unnest($1::text[], $2::text[], $3::text[]) AS u(label, key, search)
       WHERE x.label = u.label AND x.key = u.key`,
      [part.map((e) => e.label), part.map((e) => e.key), part.map((e) => e.search)],
    );
  }
}

// One statement for a batch of messages' new vectors; it names the session too, which a distributed table's
// shards are chosen by (the seq alone is unique on either layout).
async function writeBack(
  query: Query,
  table: string,
  routed: boolean,
  updates: readonly { seq: string; sessionId: string; search: string | null }[],
): Promise<void> {
  if (updates.length === 0) return;
  const sameShard = routed ? " AND x.session_id = u.session_id" : "";
  await query(
    `UPDATE ${table} x SET search = u.search::tsvector
     FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u(seq, session_id, search) WHERE x.seq = u.seq${sameShard}`,
    [updates.map((u) => u.seq), updates.map((u) => u.sessionId), updates.map((u) => u.search)],
  );
}

/** Whether `table` has the `session_id` column the Citus layout adds. */
async function hasSessionColumn(query: Query, table: string): Promise<boolean> {
  const [row] = await query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'session_id'
       AND NOT attisdropped) AS found`,
    [table],
  );
  return row?.found === true;
}
