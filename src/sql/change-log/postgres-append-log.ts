import { createHash } from "node:crypto";
import type { Query } from "../engines/postgres/client.js";
import type { Layout } from "../engines/postgres/layout.js";

/** Where the store's tables live (schema.ts's Tables has these): all the log's names are derived from it. */
export interface LogPlace {
  schema: string | null;
  prefix: string;
}

/**
 * A call of a `void` function (the log's advisory lock, its NOTIFY) as a select-list value. Citus keeps the result
 * of a CTE beside a modifying one as an intermediate result (a table), and a `void` column cannot be stored, so in
 * its layout the value is text.
 */
export function voidValue(t: { layout: Layout }, call: string): string {
  return t.layout.voidValue(call);
}

/** What an append needs to insert its own change-log row in its statement (PostgresChangeLog.statementLog). */
export interface StatementLog {
  table: string;
  lockKey: string;
  channel: string;
  origin: string;
}

/** An append's or import's own change-log row, inserted in its statement: the log and the row's kind. */
export interface LoggedAppend {
  log: StatementLog;
  kind: "append" | "import";
}

/** The change-log table of `tables`, its NOTIFY channel and its advisory-lock key (so two stores' logs never mix). */
export function logNames(tables: LogPlace): Omit<StatementLog, "origin"> {
  const quote = (name: string) => `"${name}"`;
  const table = (tables.schema ? `${quote(tables.schema)}.` : "") + quote(`${tables.prefix}agent_changes`);
  const digest = createHash("sha1").update(table).digest();
  return {
    table,
    channel: `agent_session_changes_${digest.toString("hex").slice(0, 16)}`,
    lockKey: digest.readBigInt64BE(0).toString(),
  };
}

/**
 * The change log's index by session, so an erasure deletes a session's rows (erase.ts) as one range of it instead
 * of reading the whole log; `name` is the index schema-qualified (for `to_regclass`). Made with the table
 * (change-log.ts), and by migration 15 for a log made before it. One more entry per logged write.
 */
export function logIndex(tables: LogPlace): { name: string; create: string } {
  const quote = (name: string) => `"${name}"`;
  const index = quote(`${tables.prefix}agent_changes_session`);
  return {
    name: (tables.schema ? `${quote(tables.schema)}.` : "") + index,
    create: `CREATE INDEX IF NOT EXISTS ${index} ON ${logNames(tables).table} (session_id)`,
  };
}

/** Migration 15: indexes a change log made before its index was (a store without a log has nothing to index). */
export async function indexChangeLog(query: Query, tables: LogPlace): Promise<void> {
  const [found] = await query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [
    logNames(tables).table,
  ]);
  if (found?.present) await query(logIndex(tables).create);
}

/**
 * The CTEs by which an append statement (append.ts) inserts its change-log row and NOTIFY, only when it inserted
 * its message: the message and its row then commit together, so a writer killed after the write cannot leave a
 * stored message no subscriber hears of. `$at` is the store's origin, `$at+1` the kind ('append' | 'import'), `$at+2` the ids' JSON. The
 * advisory lock (cursor order = commit order, see change-log.ts) is taken from the inserted row, so after the head
 * lock, as in every other writer: lock order is the same everywhere. The statement's result reads `logged`.
 */
export function logCtes(t: LogPlace & { layout: Layout }, at: number): string {
  const { table, lockKey, channel } = logNames(t);
  return `,
  lk AS (SELECT ${voidValue(t, `pg_advisory_xact_lock(${lockKey}::bigint)`)} FROM ins),
  lg AS (
    INSERT INTO ${table} (origin, session_id, kind, ids, parent_id, data)
    SELECT $${at}::text, $1::text, $${at + 1}::text, $${at + 2}::text,
      CASE WHEN n.parent_seq IS NULL THEN NULL WHEN $4::text = 'id' THEN $3::text
        ELSE (SELECT leaf_id FROM verdict) END, NULL
    FROM ins, node n, lk
    RETURNING seq
  ),
  nt AS (SELECT seq, ${voidValue(t, `pg_notify('${channel}', seq::text)`)} FROM lg)`;
}
