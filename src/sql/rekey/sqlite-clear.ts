/**
 * SQLite's statements for sealing an owner's rows in clear (sql/rekey/clear.ts): its messages still in clear,
 * and the summaries, kept stream chunks, blocks and entries of the owner and of its sessions in clear (its facts':
 * sql/facts/sqlite.ts `sqliteFactRekey`). Only a TEXT value starting `~sealed` is sealed (clear text that starts so is stored as a BLOB, sql/engines/sqlite/free-text.ts).
 */
import { memoryDirectoryKey } from "../../context/block-keys.js";
import { freeTextSql } from "../engines/sqlite/free-text.js";
import { command, query } from "../program.js";
import type { ChangeRow, ClearChunkRow, OwnedSession, SummaryRow } from "./table.js";

// The owner's session ids, bound as one JSON array.
const IDS = "(SELECT value FROM json_each(?))";
// A row (`r`) of the owner by record, or with no record and a key (label) the owner's memory directory's or ending
// in `_<id>` of one of its sessions; the hooks' suffix rule then decides whose it is. The row's columns are named
// with their table: json_each has a `key` column of its own.
const MAYBE_OWNED = (name: string) => `(r.owner = ? OR r.session_id IN ${IDS}
  OR (r.owner IS NULL AND r.session_id IS NULL AND (r.${name} = ? OR EXISTS (
    SELECT 1 FROM json_each(?) j WHERE length(r.${name}) > length(j.value) + 1
      AND substr(r.${name}, length(r.${name}) - length(j.value)) = '_' || j.value))))`;
const maybeOwned = (owner: string, ids: string[]) => {
  const json = JSON.stringify(ids);
  return [owner, json, memoryDirectoryKey("owner", owner), json];
};

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
      `SELECT h.num, s.id AS session_id FROM agent_sessions s LEFT JOIN agent_session_heads h ON h.session_id = s.id
       WHERE s.owner = ?`,
      [owner],
    ),
  // Its delete trigger leaves each vector's number for the purge to drain from sqlite-vec's table.
  dropVectors: (session: OwnedSession) =>
    command("DELETE FROM agent_message_vectors WHERE session_num = ?", [Number(session.num)]),
  changesPresent: () =>
    query("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'agent_changes'"),
  clearChanges: (ids: string[]) =>
    query(
      `SELECT seq, session_id, data FROM agent_changes
       WHERE kind = 'compaction' AND data IS NOT NULL AND session_id IN ${IDS}`,
      [JSON.stringify(ids)],
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
  clearChunks: (ids: string[]) =>
    query(
      `SELECT session_id, stream_id, seq, chunk FROM agent_stream_chunks
       WHERE session_id IN ${IDS} AND chunk NOT GLOB '~sealed*'`,
      [JSON.stringify(ids)],
    ),
  writeChunk: (row: ClearChunkRow, sealed: string) =>
    command("UPDATE agent_stream_chunks SET chunk = ? WHERE session_id = ? AND stream_id = ? AND seq = ?", [
      sealed,
      row.session_id,
      row.stream_id,
      Number(row.seq),
    ]),
  clearBlocks: (owner: string, ids: string[]) =>
    query(
      `SELECT r.key, ${freeTextSql("r.content", "content")}, r.sealed, r.session_id, r.owner
       FROM agent_context_blocks r WHERE r.sealed IS NULL AND ${MAYBE_OWNED("key")}`,
      maybeOwned(owner, ids),
    ),
  clearEntries: (owner: string, ids: string[]) =>
    query(
      `SELECT r.seq, r.label, r.key, ${freeTextSql("r.content", "content")}, r.sealed_chars, r.session_id, r.owner
       FROM agent_search_entries r WHERE r.sealed_chars IS NULL AND ${MAYBE_OWNED("label")}`,
      maybeOwned(owner, ids),
    ),
};
