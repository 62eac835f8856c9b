/** Postgres's statements of the session registry (sql/registry/steps.ts): times are the server's clock. */

import { USAGE_COUNTERS, usageBounds, usageDeltas } from "../../store/usage-totals.js";
import { ownedMessagesCte } from "../engines/postgres/fts.js";
import { type GuardTables, ownerGuardParams, ownerGuardSql } from "../engines/postgres/owner-guard.js";
import { statement, type Tables } from "../engines/postgres/tables.js";
import { isoSql } from "../engines/postgres/tree.js";
import { query } from "../program.js";
import { NOW, nextActivity, usageAssignments, usageFits } from "./postgres-writes.js";
import type { RegistryStatements } from "./steps.js";

const COLUMNS = `id, name, parent_session_id, model, source, input_tokens, output_tokens, cache_read_tokens,
  cache_write_tokens, estimated_cost, end_reason, ${isoSql("created_at")} AS created_at,
  ${isoSql("updated_at")} AS updated_at, owner, pinned`;

// Citus refuses the ISO formatting (not IMMUTABLE) in RETURNING: there the outer SELECT formats the stored row.
const returningRow = (t: Tables, write: string) =>
  t.layout.formatsInReturning
    ? `${write} RETURNING ${COLUMNS}`
    : `WITH r AS (${write} RETURNING *) SELECT ${COLUMNS} FROM r`;
// The name's guard (store/crypto/write-guard.ts) from $7: a key the owner got since the name's look-up refuses it.
const insertSql = (t: Tables) => `INSERT INTO ${t.sessions} (id, name, parent_session_id,
    model, source, owner, created_at, updated_at, activity)
  SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, ${NOW}, ${NOW}, ${nextActivity(t)}
  WHERE true${ownerGuardSql(t, 7)}
  ON CONFLICT (id) DO NOTHING`;
const created = (t: Tables, ctes: string) =>
  t.layout.formatsInReturning
    ? `WITH r AS (${insertSql(t)} RETURNING ${COLUMNS})${ctes} SELECT * FROM r`
    : `WITH r AS (${insertSql(t)} RETURNING *)${ctes} SELECT ${COLUMNS} FROM r`;
const createSql = statement((t) => returningRow(t, insertSql(t)));
// Owned: messages stored before the registration take the owner lexeme in the same statement (sql/engines/postgres/fts.ts).
const createOwnedSql = statement((t) => created(t, `, ${ownedMessagesCte(t, "r")}`));
const getSql = statement((t) => `SELECT ${COLUMNS} FROM ${t.sessions} WHERE id = $1`);
/**
 * @internal list(): the order of the index agent_sessions_recent exactly, so rows come out of the index without a
 * sort (exported for the plan check in the tests). `$1` NULL = no limit.
 */
export const listSql = statement(
  // Qualified: a bare `updated_at` would name the output column (the ISO text), which no index serves.
  (t) =>
    `SELECT ${COLUMNS} FROM ${t.sessions} s ORDER BY s.updated_at DESC, s.activity DESC LIMIT $1 OFFSET $2`,
);
/** @internal list({ owner }): one range of agent_sessions_owner in its order (exported for the plan check). */
export const listOwnerSql = statement(
  (t) =>
    `SELECT ${COLUMNS} FROM ${t.sessions} s WHERE s.owner = $3
      ORDER BY s.updated_at DESC, s.activity DESC LIMIT $1 OFFSET $2`,
);
// A range of the primary key per page, in its collation's order of the ids; of one source, a range of the
// index agent_sessions_source (source, id), so the sessions of other sources are never read.
const scanFirstSql = statement((t) => `SELECT ${COLUMNS} FROM ${t.sessions} ORDER BY id LIMIT $1`);
const scanAfterSql = statement(
  (t) => `SELECT ${COLUMNS} FROM ${t.sessions} WHERE id > $2 ORDER BY id LIMIT $1`,
);
/**
 * @internal scan({ source }): the first page and the next ones (exported for the plan check in the tests). Two
 * statements, not `($2 IS NULL OR id > $2)`: a generic plan could not bound the index range by that.
 */
export const scanSourceFirstSql = statement(
  (t) => `SELECT ${COLUMNS} FROM ${t.sessions} WHERE source = $2 ORDER BY id LIMIT $1`,
);
/** @internal see {@link scanSourceFirstSql}. */
export const scanSourceAfterSql = statement(
  (t) => `SELECT ${COLUMNS} FROM ${t.sessions} WHERE source = $3 AND id > $2 ORDER BY id LIMIT $1`,
);
const countSql = statement((t) => `SELECT count(*) AS n FROM ${t.sessions}`);

/**
 * One UPDATE of `assignments` (parameters from `$2`) that also bumps `updated_at` and the activity order; `guardAt`:
 * the parameter its name's guard starts at.
 */
function updateSql(assignments: string, guardAt?: number) {
  return statement((t) =>
    returningRow(
      t,
      `UPDATE ${t.sessions} SET ${assignments}${assignments ? ", " : ""}updated_at = ${NOW},
      activity = ${nextActivity(t, true)} WHERE id = $1${guardAt ? ownerGuardSql(t, guardAt) : ""}`,
    ),
  );
}

const touchSql = updateSql("");
const renameSql = updateSql("name = $2", 3);
const endSql = updateSql("end_reason = $2");

// $1 id, $2..$6 the deltas, $7..$16 their bounds.
const usageSql = statement((t) =>
  returningRow(
    t,
    `UPDATE ${t.sessions} SET ${usageAssignments(2)}, updated_at = ${NOW}, activity = ${nextActivity(t, true)}
    WHERE id = $1 AND ${usageFits(7)}`,
  ),
);

/** The counters of session `$1` (of source `$2` and owner `$3` when not null); `FOR UPDATE` in `lockedCountersSql`. */
export const countersSql = statement(
  (t) => `SELECT ${USAGE_COUNTERS.join(", ")} FROM ${t.sessions} WHERE id = $1
    AND ($2::text IS NULL OR source = $2::text) AND ($3::text IS NULL OR owner = $3::text)`,
);
const lockedCountersSql = statement((t) => `${countersSql(t)} FOR UPDATE`);

const pinSql = statement((t) => returningRow(t, `UPDATE ${t.sessions} SET pinned = $2 WHERE id = $1`));

/** The statement table of the registry in the tables `t`. */
export function postgresRegistry(t: GuardTables): RegistryStatements {
  return {
    create: (r, guard) =>
      query((r.owner ? createOwnedSql : createSql)(t), [
        r.id,
        r.name,
        r.parentSessionId ?? null,
        r.model ?? null,
        r.source ?? null,
        r.owner ?? null,
        ...ownerGuardParams(t, guard),
      ]),
    get: (id) => query(getSql(t), [id]),
    page: ({ owner, limit, offset }) => {
      const paging = [limit ?? null, offset ?? 0];
      return owner === undefined ? query(listSql(t), paging) : query(listOwnerSql(t), [...paging, owner]);
    },
    scan: (pageSize, source, after) => {
      if (after === null) {
        return source === undefined
          ? query(scanFirstSql(t), [pageSize])
          : query(scanSourceFirstSql(t), [pageSize, source]);
      }
      return source === undefined
        ? query(scanAfterSql(t), [pageSize, after])
        : query(scanSourceAfterSql(t), [pageSize, after, source]);
    },
    count: () => query(countSql(t)),
    change: (id, change) =>
      change
        ? change.field === "name"
          ? query(renameSql(t), [id, change.value, ...ownerGuardParams(t, change.guard)])
          : query(endSql(t), [id, change.value])
        : query(touchSql(t), [id]),
    usage: (id, usage) => query(usageSql(t), [id, ...usageDeltas(usage), ...usageBounds(usage)]),
    counters: (id) => query(lockedCountersSql(t), [id, null, null]),
    pin: (id, pinned) => query(pinSql(t), [id, pinned]),
  };
}
