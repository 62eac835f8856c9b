/**
 * Postgres' adoption table (the program: steps.ts): the reference's tables on the connection's `search_path`, read
 * in keyset pages by creation time and id (each reference write is its own statement), and written through our own
 * transfer import and read back through its export (postgres/adopt/import.ts, handed in as {@link AdoptionWrites}),
 * so batches and Citus routing are the import's.
 */

import { REFERENCE_SOURCE, REFERENCE_TABLES, type ReferenceTable } from "../../store/adopt/adopt.js";
import type { Executor } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import { command, query, routine } from "../program.js";
import { ADOPT_PAGE, type AdoptionStatements, type AdoptionWrites } from "./steps.js";

const SESSION_IDS = {
  assistant_messages: "SELECT session_id AS id FROM assistant_messages",
  assistant_compactions: "SELECT session_id FROM assistant_compactions",
  assistant_sessions: "SELECT id FROM assistant_sessions",
} as Record<ReferenceTable, string>;
// Storage order is creation time, ties by id; a parent that is not strictly earlier is waited for.
const KEY = `COALESCE(m.created_at, '-infinity'::timestamptz)`;
const PARENT_KEY = `COALESCE(p.created_at, '-infinity'::timestamptz)`;
const MESSAGES = `SELECT m.id, m.parent_id, m.role, m.content, m.created_at, ${KEY}::text AS k, p.id IS NOT NULL AS parent_found,
         p.id IS NOT NULL AND (${PARENT_KEY}, p.id) < (${KEY}, m.id) AS parent_before
       FROM assistant_messages m LEFT JOIN assistant_messages p ON p.session_id = m.session_id AND p.id = m.parent_id
       WHERE m.session_id = $1 AND ($2::text IS NULL OR (${KEY}, m.id) > ($2::timestamptz, $3::text))
       ORDER BY ${KEY}, m.id LIMIT $4`;
// One statement reads them all (no page follows).
const COMPACTIONS = `SELECT id, summary, from_message_id, to_message_id, created_at FROM assistant_compactions
       WHERE session_id = $1 ORDER BY created_at, id`;

/** The statements and routines of an adoption over `executor`, our tables named by `t`, writing through `writes`. */
export function postgresAdoption(executor: Executor, t: Tables, writes: AdoptionWrites): AdoptionStatements {
  return {
    probe: () =>
      query(
        `SELECT n AS name FROM unnest($2::text[]) AS n WHERE to_regclass(n) IS NOT NULL
         UNION ALL SELECT 'recorded' FROM ${t.adoptions} WHERE source = $1`,
        [REFERENCE_SOURCE, [...REFERENCE_TABLES]],
      ),
    sessionIds: (sources) => (last) =>
      query(
        `SELECT id FROM (${sources.map((s) => SESSION_IDS[s]).join(" UNION ")}) s WHERE id IS NOT NULL
         AND ($1::text IS NULL OR id COLLATE "C" > $1::text) ORDER BY id COLLATE "C" LIMIT $2`,
        [last ? last.id : null, ADOPT_PAGE],
      ),
    referenceSession: (sessionId) => query("SELECT * FROM assistant_sessions WHERE id = $1", [sessionId]),
    messages: (sessionId) => (last) =>
      query(MESSAGES, [sessionId, last ? last.k : null, last ? (last.id ?? "") : null, ADOPT_PAGE]),
    compactions: (sessionId) => (last) => (last ? undefined : query(COMPACTIONS, [sessionId])),
    contextRows: (table) => {
      const key = table === "cf_agents_context_blocks" ? "''" : "key";
      return (last) =>
        query(
          `SELECT label, ${key} AS key, content FROM ${table}
       WHERE $1::text IS NULL OR (label COLLATE "C", ${key} COLLATE "C") > ($1::text, $2::text)
       ORDER BY label COLLATE "C", ${key} COLLATE "C" LIMIT $3`,
          [last ? last.label : null, last ? last.key : null, ADOPT_PAGE],
        );
    },
    text: (value) => value as string,
    record: (values) =>
      command(
        `INSERT INTO ${t.adoptions} (source, adopted_at, report) VALUES ($1, $2, $3)
     ON CONFLICT (source) DO UPDATE SET adopted_at = EXCLUDED.adopted_at, report = EXCLUDED.report`,
        values,
      ),
    session: writes.session,
    rows: writes.rows,
    drop: (tables) =>
      routine(() =>
        executor.transaction(async (q) => {
          for (const table of tables) await q(`DROP TABLE IF EXISTS ${table}`);
        }),
      ),
  };
}
