/**
 * SQLite's statements for sealing an owner's rows in clear (store/sql/rekey-clear.ts): its messages still in clear,
 * and the summaries, facts, kept stream chunks, blocks and entries of the owner and of its sessions in clear. Only
 * a TEXT value starting `~sealed` is sealed (clear text that starts so is stored as a BLOB, connection/free-text.ts).
 */
import { memoryDirectoryKey } from "../../context/block-keys.js";
import { command, query } from "../../store/sql/program.js";
import type { ChangeRow, ClearChunkRow, OwnedSession, SummaryRow } from "../../store/sql/rekey-table.js";
import { freeTextSql } from "../connection/free-text.js";

const SESSIONS = "SELECT id FROM agent_sessions WHERE owner = ?";
// A row of the owner by record, or with no record and a key (label) the owner's memory directory's or ending in
// `_<id>` of one of its sessions; the hooks' suffix rule then decides whose it is.
const MAYBE_OWNED = (name: string) => `(owner = ? OR session_id IN (${SESSIONS})
  OR (owner IS NULL AND session_id IS NULL AND (${name} = ? OR EXISTS (
    SELECT 1 FROM agent_sessions s WHERE s.owner = ? AND length(${name}) > length(s.id) + 1
      AND substr(${name}, length(${name}) - length(s.id)) = '_' || s.id))))`;
const maybeOwned = (owner: string) => [owner, owner, memoryDirectoryKey("owner", owner), owner];

/** The statements of SQLite's rekey table that find and write rows in clear. */
export const REKEY_CLEAR = {
  clearLeft: (owner: string) =>
    query(
      `SELECT count(*) AS n FROM agent_sessions s JOIN agent_session_heads h ON h.session_id = s.id
       JOIN agent_messages m ON m.session_num = h.num WHERE s.owner = ? AND CASE WHEN m.chunks = 0
         THEN substr(m.content, 1, 7) ELSE (SELECT substr(c.data, 1, 7) FROM agent_message_chunks c
           WHERE c.seq = m.seq AND c.idx = 0) END IS NOT '~sealed'`,
      [owner],
    ),
  vectorsPresent: () =>
    query("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'agent_message_vectors'"),
  ownerSessions: (owner: string) =>
    query(
      `SELECT h.num, h.session_id FROM agent_sessions s JOIN agent_session_heads h ON h.session_id = s.id
       WHERE s.owner = ?`,
      [owner],
    ),
  // Its delete trigger leaves each vector's number for the purge to drain from sqlite-vec's table.
  dropVectors: (session: OwnedSession) =>
    command("DELETE FROM agent_message_vectors WHERE session_num = ?", [Number(session.num)]),
  changesPresent: () =>
    query("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'agent_changes'"),
  clearChanges: (owner: string) =>
    query(
      `SELECT seq, session_id, data FROM agent_changes
       WHERE kind = 'compaction' AND data IS NOT NULL AND session_id IN (${SESSIONS})`,
      [owner],
    ),
  writeChange: (row: ChangeRow, data: string) =>
    command("UPDATE agent_changes SET data = ? WHERE seq = ?", [data, Number(row.seq)]),
  clearSummaries: (owner: string) =>
    query(
      `SELECT c.seq, c.id, h.session_id, ${freeTextSql("c.summary", "summary")}
       FROM agent_sessions s JOIN agent_session_heads h ON h.session_id = s.id
       JOIN agent_compactions c ON c.session_num = h.num
       WHERE s.owner = ? AND (typeof(c.summary) <> 'text' OR c.summary NOT GLOB '~sealed*')`,
      [owner],
    ),
  writeClearSummary: (row: SummaryRow, sealed: string) =>
    command("UPDATE agent_compactions SET summary = ? WHERE seq = ?", [sealed, row.seq]),
  clearFacts: (owner: string) =>
    query(
      `SELECT seq, scope, id, text, about FROM agent_facts WHERE sealed_chars IS NULL
       AND (scope = ? OR scope IN (SELECT 's:' || id FROM agent_sessions WHERE owner = ?))`,
      [`o:${owner}`, owner],
    ),
  clearChunks: (owner: string) =>
    query(
      `SELECT session_id, stream_id, seq, chunk FROM agent_stream_chunks
       WHERE session_id IN (${SESSIONS}) AND chunk NOT GLOB '~sealed*'`,
      [owner],
    ),
  writeChunk: (row: ClearChunkRow, sealed: string) =>
    command("UPDATE agent_stream_chunks SET chunk = ? WHERE session_id = ? AND stream_id = ? AND seq = ?", [
      sealed,
      row.session_id,
      row.stream_id,
      Number(row.seq),
    ]),
  clearBlocks: (owner: string) =>
    query(
      `SELECT key, ${freeTextSql("content", "content")}, sealed, session_id, owner FROM agent_context_blocks
       WHERE sealed IS NULL AND ${MAYBE_OWNED("key")}`,
      maybeOwned(owner),
    ),
  clearEntries: (owner: string) =>
    query(
      `SELECT seq, label, key, ${freeTextSql("content", "content")}, sealed_chars, session_id, owner
       FROM agent_search_entries WHERE sealed_chars IS NULL AND ${MAYBE_OWNED("label")}`,
      maybeOwned(owner),
    ),
};
