/**
 * Postgres' statements for the transfer's export (export.ts): listings in keyset
 * pages along an index, each a prepared statement; in the Citus layout a session's reads also name it (the last
 * parameter), so each runs on its one node (and the parent join, which is not on the distribution column, is
 * allowed there). Rows are opened by the engine's own helpers (an encrypted owner's key: sql/sealing/postgres-stored-form.ts),
 * which postgres/transfer/export.ts hands in.
 */
import { recordOf } from "../../context/records.js";
import type { SessionSums } from "../../store/transfer/base.js";
import type { Executor } from "../engines/postgres/client.js";
import { runProgram } from "../engines/postgres/program.js";
import { statement, type Tables } from "../engines/postgres/tables.js";
import { isoSql } from "../engines/postgres/tree.js";
import { type Program, prepared } from "../program.js";
import { type ExportTable, PAGE, page, type TransferHead } from "./export.js";

// Registered sessions oldest activity first. The keyset carries `updated_at` as UTC text to the microsecond (era
// included), which reads back as the same instant whatever the connection's DateStyle or TimeZone.
const AFTER_AT = `to_char(s.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US BC')`;
const registeredSql = statement(
  (t) => `SELECT s.id, ${AFTER_AT} AS after_at, s.activity FROM ${t.sessions} s
    WHERE (s.updated_at, s.activity) > ($2::timestamp AT TIME ZONE 'UTC', $3::bigint)
    ORDER BY s.updated_at, s.activity LIMIT $1`,
);
// Sessions holding data that the registered listing did not name, by id in UTF-8 byte order (`COLLATE "C"`, index
// agent_session_heads_id_c), after that listing's last key ($1 and $2). In the Citus layout the overlays' subquery
// names the session too: Citus joins co-located tables only on their distribution column.
function unregistered(after: string): (t: Tables) => string {
  return statement(
    (t) => `SELECT h.session_id FROM ${t.heads} h
      WHERE ${after} AND NOT EXISTS (SELECT 1 FROM ${t.sessions} s WHERE s.id = h.session_id
          AND (s.updated_at, s.activity) <= ($1::timestamp AT TIME ZONE 'UTC', $2::bigint))
        AND (h.message_count > 0 OR EXISTS (SELECT 1 FROM ${t.compactions} c WHERE c.session_num = h.num${t.layout.onSession("c", "h.session_id")}))
      ORDER BY h.session_id COLLATE "C" LIMIT $3`,
  );
}
// A first page has no key: "" is a real session id (the default session), so no string can stand below them all.
const unregisteredSql = unregistered("$4::text IS NULL");
const unregisteredAfterSql = unregistered(`h.session_id COLLATE "C" > $4::text`);

const headSql = statement((t) => `SELECT num, leaf_id, session_id FROM ${t.heads} WHERE session_id = $1`);
const footprintSql = statement(
  (t) => `SELECT count(*) AS messages, sum(m.bytes) AS bytes, sum(m.tokens) AS tokens,
      (SELECT count(*) FROM ${t.compactions} c WHERE c.session_num = $1::bigint${t.layout.onSession("c", "$2::text")}) AS compactions
    FROM ${t.messages} m WHERE m.session_num = $1::bigint${t.layout.onSession("m", "$2::text")}`,
);
const messagesSql = statement(
  (t) => `SELECT m.seq, m.parent_seq, m.id, p.id AS parent_id, m.role, m.content,
      ${isoSql("m.created_at")} AS created_at
    FROM ${t.messages} m LEFT JOIN ${t.messages} p ON p.seq = m.parent_seq${t.layout.onSession("p", "m.session_id")}
    WHERE m.session_num = $1::bigint AND m.seq > $3::bigint${t.layout.onSession("m", "$4::text")} ORDER BY m.seq LIMIT $2`,
);
const compactionsSql = statement(
  (t) => `SELECT c.seq, c.id, c.summary, c.summary_json, c.from_message_id, c.to_message_id, c.details,
      ${isoSql("c.created_at")} AS created_at
    FROM ${t.compactions} c
    WHERE c.session_num = $1::bigint AND c.seq > $3::bigint${t.layout.onSession("c", "$4::text")} ORDER BY c.seq LIMIT $2`,
);
function blocks(after: string): (t: Tables) => string {
  return statement(
    (t) => `SELECT key, content, content_json, sealed, session_id, owner FROM ${t.blocks} WHERE ${after}
      ORDER BY key COLLATE "C" LIMIT $1`,
  );
}
const blocksSql = blocks("$2::text IS NULL");
const blocksAfterSql = blocks(`key COLLATE "C" > $2::text`);
const entriesSql = statement(
  (t) => `SELECT seq, label, key, content, content_json, sealed_chars, session_id, owner FROM ${t.entries}
    WHERE seq > $2::bigint
    ORDER BY seq LIMIT $1`,
);

/** A session's head as a transfer reads it (bigint as pg returns it). */
export interface PostgresHead extends TransferHead {
  num: string;
  leaf_id: string | null;
}

/** The export table of a Postgres store: `ready` answers its executor, `t` its tables. */
/** What the export table opens with Postgres's own helpers (stored-form.ts, summaries.ts, media/, sealed-context.ts). */
export type PostgresExportOpeners = Pick<
  ExportTable<PostgresHead>,
  "openMessage" | "openCompaction" | "attachment" | "openBlock" | "openEntry"
>;

/** The export table of a Postgres store over `ready`'s executor and tables `t`, opening rows with `openers`. */
export function postgresExportTable(
  ready: () => Promise<Executor>,
  t: Tables,
  openers: PostgresExportOpeners,
): ExportTable<PostgresHead> {
  const own = (head: TransferHead) => t.layout.routeParams(head.session_id);
  return {
    ...openers,
    // Every read of an export is a prepared statement.
    run: async <T>(program: Program<T>) => {
      const executor = await ready();
      return runProgram(
        <R>(sql: string, params?: readonly unknown[]) => executor.query<R>(sql, params, true),
        program,
      );
    },
    // -infinity lies below every time an ISO-8601 string can name.
    registeredStart: ["-infinity", 0],
    registered: (after) => prepared(registeredSql(t), [PAGE, ...after]),
    unregistered: (last, afterId) =>
      prepared((afterId === null ? unregisteredSql : unregisteredAfterSql)(t), [...last, PAGE, afterId]),
    head: (sessionId) => prepared(headSql(t), [sessionId]),
    // biome-ignore lint/correctness/useYield: the head row holds the leaf's id; SQLite reads it.
    *leafId(head): Program<string | null> {
      return head.leaf_id;
    },
    *sums(head): Program<SessionSums | undefined> {
      return (yield prepared(footprintSql(t), [head.num, ...own(head)]))[0] as SessionSums | undefined;
    },
    messages: (head, after) => page(prepared(messagesSql(t), [head.num, PAGE, after, ...own(head)])),
    parentsFirst: true,
    compactions: (head, after) => prepared(compactionsSql(t), [head.num, PAGE, after, ...own(head)]),
    blocks: (after) => prepared((after === null ? blocksSql : blocksAfterSql)(t), [PAGE, after]),
    entries: (after) => prepared(entriesSql(t), [PAGE, after]),
    record: (row) => recordOf(row.session_id as string | null, row.owner as string | null),
  };
}
