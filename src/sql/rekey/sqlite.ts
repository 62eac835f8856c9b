/**
 * SQLite's statements of a key rotation (sql/rekey/table.ts): the walk over the owner's sessions and rows,
 * the final checks, and the summaries, blocks and entries re-sealed at the end. A row's content may be in chunks
 * (sql/engines/sqlite/chunks.ts): the walk selects {@link contentSql}, and the final check reads a chunked row's first piece.
 */

import { contentSql } from "../engines/sqlite/chunks.js";
import { freeTextSql } from "../engines/sqlite/free-text.js";
import { command, query } from "../program.js";
import { ROTATION } from "./sqlite-rotation.js";
import type { Cursor, NameRow, Num, OwnedSession, SummaryRow } from "./table.js";

const OWNED = `FROM agent_sessions s JOIN agent_session_heads h ON h.session_id = s.id
  JOIN agent_messages m ON m.session_num = h.num WHERE s.owner = ?`;

const ROWS = `SELECT seq, id, chunks, ${contentSql()} AS content FROM agent_messages WHERE session_num = ?`;

// A row's first bytes, from its first chunk when it is split.
const FIRST = `CASE WHEN m.chunks = 0 THEN substr(m.content, 1, ?)
    ELSE (SELECT substr(c.data, 1, ?) FROM agent_message_chunks c WHERE c.seq = m.seq AND c.idx = 0) END`;

const EXAMINED = `SELECT count(*) AS n ${OWNED} AND (h.num < ? OR (h.num = ? AND ? IS NOT NULL AND m.id <= ?))`;
const LEFT = `SELECT count(*) AS n ${OWNED} AND ${FIRST} GLOB '~sealed*' AND ${FIRST} <> ?`;
const WRITE_MESSAGE = "UPDATE agent_messages SET content = ?, chunks = ?, content_hash = ? WHERE seq = ?";

/** The statements of SQLite's rekey table; its hooks are in sql/rekey-hooks/sqlite.ts. */
export const REKEY = {
  ...ROTATION,
  // A batch's transaction excludes a rotation's start: the key a batch seals under is checked as it seals.
  keyCheck: () => null,
  count: (owner: string) => query(`SELECT count(*) AS n ${OWNED}`, [owner]),
  sessionAt: (num: Num) =>
    query("SELECT num, session_id FROM agent_session_heads WHERE num = ?", [Number(num)]),
  nextSession: (owner: string, after: Num) =>
    query(
      `SELECT h.num, h.session_id FROM agent_sessions s JOIN agent_session_heads h ON h.session_id = s.id
       WHERE s.owner = ? AND h.num > ? ORDER BY h.num LIMIT 1`,
      [owner, Number(after)],
    ),
  rowsAfter: (session: OwnedSession, after: string | null, limit: number) =>
    after === null
      ? query(`${ROWS} ORDER BY id LIMIT ?`, [session.num, limit])
      : query(`${ROWS} AND id > ? ORDER BY id LIMIT ?`, [session.num, after, limit]),
  examined: (owner: string, { session_num: n, message_id: id }: Cursor) =>
    query(EXAMINED, [owner, n, n, id, id]),
  underOtherKeys: (owner: string, start: string) =>
    query(LEFT, [owner, ...Array(4).fill(start.length), start]),
  // Only TEXT values are sealed: clear text that starts like sealed content is stored as a BLOB (free-text.ts).
  summaries: (owner: string, start: string) =>
    query(
      `SELECT c.seq, c.id, h.session_id, c.summary
       FROM agent_sessions s JOIN agent_session_heads h ON h.session_id = s.id
       JOIN agent_compactions c ON c.session_num = h.num
       WHERE s.owner = ? AND typeof(c.summary) = 'text' AND c.summary GLOB '~sealed*' AND substr(c.summary, 1, ?) <> ?`,
      [owner, start.length, start],
    ),
  writeSummary: (row: SummaryRow, sealed: string) =>
    command("UPDATE agent_compactions SET summary = ? WHERE seq = ?", [sealed, row.seq]),
  blocksUnder: (start: string) =>
    query(
      `SELECT key, ${freeTextSql("content", "content")}, sealed, session_id, owner FROM agent_context_blocks
       WHERE sealed IS NOT NULL AND substr(content, 1, ?) = ?`,
      [start.length, start],
    ),
  entriesUnder: (start: string) =>
    query(
      `SELECT seq, label, key, ${freeTextSql("content", "content")}, sealed_chars, session_id, owner
       FROM agent_search_entries
       WHERE sealed_chars IS NOT NULL AND substr(content, 1, ?) = ?`,
      [start.length, start],
    ),
  namesUnder: (owner: string, start: string) =>
    query("SELECT id, name FROM agent_sessions WHERE owner = ? AND substr(name, 1, ?) = ?", [
      owner,
      start.length,
      start,
    ]),
  writeName: (row: NameRow, sealed: string) =>
    command("UPDATE agent_sessions SET name = ? WHERE id = ? AND name = ?", [sealed, row.id, row.name]),
  writeMessage: (seq: number, content: string, chunks: number, hash: string | null) =>
    command(WRITE_MESSAGE, [content, chunks, hash, seq]),
  writeBlock: (key: string, content: unknown, sealed: unknown) =>
    command("UPDATE agent_context_blocks SET content = ?, sealed = ? WHERE key = ?", [content, sealed, key]),
  // The entry's FTS row follows its content (the text it is indexed by under the new key), its key column the key's
  // digest under it (entry-keys.ts). A row a write stored under the new key's digest meanwhile is the newer: the
  // old one goes.
  writeEntry: (
    seq: number,
    label: string,
    s: { key: string; content: unknown; sealedChars: unknown; text: string },
  ) => [
    command("DELETE FROM agent_search_entries_fts WHERE rowid = ?", [seq]),
    command(
      `DELETE FROM agent_search_entries WHERE seq = ?
         AND EXISTS (SELECT 1 FROM agent_search_entries o WHERE o.label = ? AND o.key = ? AND o.seq <> ?)`,
      [seq, label, s.key, seq],
    ),
    command("UPDATE agent_search_entries SET key = ?, content = ?, sealed_chars = ? WHERE seq = ?", [
      s.key,
      s.content,
      s.sealedChars,
      seq,
    ]),
    command(
      "INSERT INTO agent_search_entries_fts (rowid, text) SELECT seq, ? FROM agent_search_entries WHERE seq = ?",
      [s.text, seq],
    ),
  ],
};
