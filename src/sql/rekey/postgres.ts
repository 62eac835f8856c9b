/**
 * Postgres's statements of a key rotation (sql/rekey/table.ts). Every statement over a per-session table
 * names its session, so Citus routes it to the one shard that holds it (sql/engines/postgres/layout.ts). A re-sealed row's search
 * vector is written in the UPDATE that re-seals it, and each write of a row compares what it read (its hash or
 * content), so a row written meanwhile keeps its writer's form.
 */

import type { Tables } from "../engines/postgres/tables.js";
import { query } from "../program.js";
import { rotationStatements } from "./postgres-rotation.js";
import type { Cursor, NameRow, Num, OwnedSession, SummaryRow } from "./table.js";

/** The statements of Postgres's rekey table in `t`; its hooks are in sql/rekey-hooks/postgres.ts. */
export function rekeyStatements(t: Tables) {
  // The owner's messages: its sessions, their heads and their rows (co-located by session on Citus).
  const owned = `FROM ${t.sessions} s JOIN ${t.heads} h ON h.session_id = s.id
    JOIN ${t.messages} m ON m.session_num = h.num${t.layout.onSession("m", "h.session_id")} WHERE s.owner = $1`;
  const on = (session: { session_id: string }) => t.layout.routeParams(session.session_id);
  return {
    ...rotationStatements(t),
    count: (owner: string) => query(`SELECT count(*) AS n ${owned}`, [owner]),
    sessionAt: (num: Num) =>
      query(`SELECT num::text AS num, session_id FROM ${t.heads} WHERE num = $1::bigint`, [num]),
    nextSession: (owner: string, after: Num) =>
      query(
        `SELECT h.num::text AS num, h.session_id FROM ${t.sessions} s JOIN ${t.heads} h ON h.session_id = s.id
         WHERE s.owner = $1 AND h.num > $2::bigint ORDER BY h.num LIMIT 1`,
        [owner, after],
      ),
    rowsAfter: (session: OwnedSession, after: string | null, limit: number) =>
      query(
        `SELECT seq::text AS seq, id, content, content_hash, (extract(epoch FROM created_at) * 1000)::float8 AS ms
         FROM ${t.messages}
         WHERE session_num = $1::bigint AND ($2::text IS NULL OR id > $2::text)${t.layout.onSession(null, "$4::text")}
         ORDER BY id LIMIT $3`,
        [session.num, after, limit, ...on(session)],
      ),
    examined: (owner: string, cursor: Cursor) =>
      query(
        `SELECT count(*) AS n ${owned}
         AND (h.num < $2::bigint OR (h.num = $2::bigint AND $3::text IS NOT NULL AND m.id <= $3::text))`,
        [owner, cursor.session_num, cursor.message_id],
      ),
    underOtherKeys: (owner: string, start: string) =>
      query(`SELECT count(*) AS n ${owned} AND m.content LIKE '~sealed%' AND left(m.content, $2) <> $3`, [
        owner,
        start.length,
        start,
      ]),
    // An unflagged summary that starts like sealed content is sealed (summaries.ts).
    summaries: (owner: string, start: string) =>
      query(
        `SELECT c.seq::text AS seq, c.id, h.session_id, c.summary
         FROM ${t.sessions} s JOIN ${t.heads} h ON h.session_id = s.id
         JOIN ${t.compactions} c ON c.session_num = h.num${t.layout.onSession("c", "h.session_id")}
         WHERE s.owner = $1 AND NOT c.summary_json AND c.summary LIKE '~sealed%' AND left(c.summary, $2) <> $3`,
        [owner, start.length, start],
      ),
    writeSummary: (row: SummaryRow, sealed: string) =>
      query(
        `UPDATE ${t.compactions} SET summary = $1 WHERE seq = $2::bigint AND summary = $3${t.layout.onSession(null, "$4::text")}
         RETURNING seq`,
        [sealed, row.seq, row.summary, ...on(row)],
      ),
    blocksUnder: (start: string) =>
      query(
        `SELECT key, content, content_json, sealed, session_id, owner FROM ${t.blocks}
         WHERE sealed AND left(content, $1) = $2`,
        [start.length, start],
      ),
    entriesUnder: (start: string) =>
      query(
        `SELECT label, key, content, content_json, sealed_chars, session_id, owner FROM ${t.entries}
         WHERE sealed_chars IS NOT NULL AND left(content, $1) = $2`,
        [start.length, start],
      ),
    namesUnder: (owner: string, start: string) =>
      query(`SELECT id, name FROM ${t.sessions} WHERE owner = $1 AND left(name, $2) = $3`, [
        owner,
        start.length,
        start,
      ]),
    writeName: (row: NameRow, sealed: string) =>
      query(`UPDATE ${t.sessions} SET name = $2 WHERE id = $1 AND name = $3 RETURNING id`, [
        row.id,
        sealed,
        row.name,
      ]),
    writeBlock: (
      row: { key: string; content: string },
      s: { content: string; json: boolean; sealed: boolean },
    ) =>
      query(
        `UPDATE ${t.blocks} SET content = $2, content_json = $3, sealed = $4
         WHERE key = $1 AND content = $5 RETURNING key`,
        [row.key, s.content, s.json, s.sealed, row.content],
      ),
    // The key column follows the key too (its digest under the new key, entry-keys.ts); a row a write stored under
    // that digest meanwhile is the newer, and the old one goes instead.
    writeEntry: (
      row: { label: string; key: string; content: string },
      s: { key: string; content: string; json: boolean; sealedChars: number | null; search: string | null },
    ) =>
      query(
        `WITH newer AS (
           SELECT 1 FROM ${t.entries} WHERE label = $1 AND key = $8 AND $8 <> $2
         ), gone AS (
           DELETE FROM ${t.entries} WHERE label = $1 AND key = $2 AND content = $7 AND EXISTS (SELECT 1 FROM newer)
           RETURNING key
         ), w AS (
           UPDATE ${t.entries} SET key = $8, content = $3, content_json = $4, sealed_chars = $5, search = $6::tsvector
           WHERE label = $1 AND key = $2 AND content = $7 AND NOT EXISTS (SELECT 1 FROM newer) RETURNING key
         ) SELECT key FROM gone UNION ALL SELECT key FROM w`,
        [row.label, row.key, s.content, s.json, s.sealedChars, s.search, row.content, s.key],
      ),
    // `columns`: the rows' seqs, new contents, new hashes, hashes read and search vectors, and the owner's lexeme,
    // a constant of the rotation (a parameter, not a look-up: Citus refuses a STABLE function over a column in an
    // UPDATE); a row without searchable text keeps no vector (NULL || lexeme is NULL).
    writeMessages: (session: OwnedSession, columns: readonly unknown[]) =>
      query(
        `UPDATE ${t.messages} m SET content = u.content, content_hash = u.hash,
           search = u.search::tsvector || array_to_tsvector(ARRAY[$6::text])
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(seq, content, hash, old, search)
         WHERE m.seq = u.seq AND m.content_hash IS NOT DISTINCT FROM u.old AND m.session_num = $7::bigint${t.layout.onSession("m", "$8::text")}
         RETURNING m.seq`,
        [...columns, session.num, ...on(session)],
      ),
  };
}
