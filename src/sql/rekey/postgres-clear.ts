/**
 * Postgres's statements for sealing an owner's rows in clear (sql/rekey/clear.ts): its messages still in
 * clear, and the summaries, kept stream chunks, blocks and entries of the owner and of its sessions in clear (its
 * facts': sql/facts/postgres.ts `postgresFactRekey`).
 * A row in clear that starts like sealed content is flagged (`summary_json`, `content_json`), so only an unflagged
 * one starting `~sealed` is sealed. Each write compares what it read, so a row written meanwhile keeps its writer's
 * form; a statement over a per-session table names its session, so Citus routes it.
 */
import { memoryDirectoryKey } from "../../context/block-keys.js";
import type { Tables } from "../engines/postgres/tables.js";
import { command, query } from "../program.js";
import type { ChangeRow, ClearChunkRow, OwnedSession, SummaryRow } from "./table.js";

/**
 * The qualified names of the tables beside `t`'s that the sealing writes: the message vectors and the change log, each named by the module that owns its table, so the engine's top hands them in.
 */
export interface ClearTables {
  vectors: string;
  changes: string;
}

/** The statements of Postgres's rekey table in `t` that find and write rows in clear. */
export function rekeyClearStatements(t: Tables, { vectors, changes }: ClearTables) {
  // A row of the owner by record, or with no record and a key (label) the owner's memory directory's or ending in
  // `_<id>` of one of its sessions ($3, the owner's session ids); the hooks' suffix rule then decides whose it is.
  // No statement joins another table: on Citus each runs on the shards of its own table.
  const maybeOwned = (name: string) => `(owner = $1 OR session_id = ANY($3::text[])
    OR (owner IS NULL AND session_id IS NULL AND (${name} = $2 OR EXISTS (
      SELECT 1 FROM unnest($3::text[]) AS sid WHERE length(${name}) > length(sid) + 1
        AND right(${name}, length(sid) + 1) = '_' || sid))))`;
  const on = (sessionId: string) => t.layout.routeParams(sessionId);
  return {
    clearLeft: (owner: string) =>
      query(
        `SELECT count(*) AS n FROM ${t.sessions} s JOIN ${t.heads} h ON h.session_id = s.id
         JOIN ${t.messages} m ON m.session_num = h.num${t.layout.onSession("m", "h.session_id")}
         WHERE s.owner = $1 AND m.content NOT LIKE '~sealed%'`,
        [owner],
      ),
    vectorsPresent: () => query("SELECT 1 AS found WHERE to_regclass($1) IS NOT NULL", [vectors]),
    ownerSessions: (owner: string) =>
      query(
        `SELECT h.num::text AS num, s.id AS session_id FROM ${t.sessions} s
         LEFT JOIN ${t.heads} h ON h.session_id = s.id WHERE s.owner = $1`,
        [owner],
      ),
    dropVectors: (session: OwnedSession) =>
      command(
        `DELETE FROM ${vectors} WHERE session_num = $1::bigint${t.layout.onSession(null, "$2::text")}`,
        [session.num, ...on(session.session_id)],
      ),
    changesPresent: () => query("SELECT 1 AS found WHERE to_regclass($1) IS NOT NULL", [changes]),
    clearChanges: (ids: string[]) =>
      query(
        `SELECT seq::text AS seq, session_id, data FROM ${changes}
         WHERE kind = 'compaction' AND data IS NOT NULL AND session_id = ANY($1::text[])`,
        [ids],
      ),
    writeChange: (row: ChangeRow, data: string) =>
      query(`UPDATE ${changes} SET data = $1 WHERE seq = $2::bigint AND data = $3 RETURNING seq`, [
        data,
        row.seq,
        row.data,
      ]),
    clearSummaries: (owner: string) =>
      query(
        `SELECT c.seq::text AS seq, c.id, h.session_id, c.summary, c.summary_json
         FROM ${t.sessions} s JOIN ${t.heads} h ON h.session_id = s.id
         JOIN ${t.compactions} c ON c.session_num = h.num${t.layout.onSession("c", "h.session_id")}
         WHERE s.owner = $1 AND (c.summary_json OR c.summary NOT LIKE '~sealed%')`,
        [owner],
      ),
    // `stored`: the column as read (the row's `summary` holds the decoded text).
    writeClearSummary: (row: SummaryRow, sealed: string) =>
      query(
        `UPDATE ${t.compactions} SET summary = $1, summary_json = false
         WHERE seq = $2::bigint AND summary = $3${t.layout.onSession(null, "$4::text")} RETURNING seq`,
        [sealed, row.seq, row.stored, ...on(row.session_id)],
      ),
    clearChunks: (ids: string[]) =>
      query(
        `SELECT session_id, stream_id, seq, chunk FROM ${t.streamChunks}
         WHERE session_id = ANY($1::text[]) AND chunk NOT LIKE '~sealed%'`,
        [ids],
      ),
    writeChunk: (row: ClearChunkRow, sealed: string) =>
      command(
        `UPDATE ${t.streamChunks} SET chunk = $1
         WHERE session_id = $2 AND stream_id = $3 AND seq = $4 AND chunk = $5`,
        [sealed, row.session_id, row.stream_id, Number(row.seq), row.chunk],
      ),
    clearBlocks: (owner: string, ids: string[]) =>
      query(
        `SELECT key, content, content_json, sealed, session_id, owner FROM ${t.blocks}
         WHERE NOT sealed AND ${maybeOwned("key")}`,
        [owner, memoryDirectoryKey("owner", owner), ids],
      ),
    clearEntries: (owner: string, ids: string[]) =>
      query(
        `SELECT label, key, content, content_json, sealed_chars, session_id, owner FROM ${t.entries}
         WHERE sealed_chars IS NULL AND ${maybeOwned("label")}`,
        [owner, memoryDirectoryKey("owner", owner), ids],
      ),
  };
}
