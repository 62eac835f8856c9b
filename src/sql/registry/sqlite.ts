/** SQLite's statements of the session registry (sql/registry/steps.ts): times are the writer's clock, in ISO. */

import { type OwnerGuard, ownerGuardParams } from "../../store/crypto/write-guard.js";
import { USAGE_COUNTERS, usageBounds, usageDeltas } from "../../store/usage-totals.js";
import { ownerGuardSqlite } from "../engines/sqlite/owner-guard.js";
import { query } from "../program.js";
import { USAGE_FITS, USAGE_SET } from "./sqlite-usage.js";
import type { RegistryStatements } from "./steps.js";

// The columns of a registry row, as `toSessionInfo` reads them.
const COLUMNS = `id, name, parent_session_id, model, source, input_tokens, output_tokens, cache_read_tokens,
  cache_write_tokens, estimated_cost, end_reason, created_at, updated_at, owner, pinned`;

// The next write-order number; the UNIQUE index on `activity` makes MAX() one index lookup.
export const NEXT_ACTIVITY = "(SELECT IFNULL(MAX(activity), 0) + 1 FROM agent_sessions)";

// One UPDATE that also bumps `updated_at` and the activity order; `where`: more conditions.
const update = (assignments: string, params: unknown[], id: string, where = "", more: unknown[] = []) =>
  query(
    `UPDATE agent_sessions SET ${assignments}${assignments ? ", " : ""}updated_at = ?, activity = ${NEXT_ACTIVITY}
     WHERE id = ?${where} RETURNING ${COLUMNS}`,
    [...params, new Date().toISOString(), id, ...more],
  );

const guardOf = (guard: OwnerGuard | undefined) =>
  ownerGuardParams(guard ?? { ownerHash: null, check: null });

/** The statement table of the registry on SQLite. */
export const sqliteRegistry: RegistryStatements = {
  // The name's guard (crypto/write-guard.ts) in the insert: a key the owner got since the name's look-up refuses it.
  create: (record, guard) => {
    const now = new Date().toISOString();
    return query(
      `INSERT INTO agent_sessions (id, name, parent_session_id, model, source, owner, created_at, updated_at,
         activity)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ${NEXT_ACTIVITY} WHERE ${ownerGuardSqlite}
       ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
      [
        record.id,
        record.name,
        record.parentSessionId ?? null,
        record.model ?? null,
        record.source ?? null,
        record.owner ?? null,
        now,
        now,
        ...guardOf(guard),
      ],
    );
  },
  get: (id) => query(`SELECT ${COLUMNS} FROM agent_sessions WHERE id = ?`, [id]),
  page: ({ owner, limit, offset }) =>
    owner === undefined
      ? // Matches the index agent_sessions_recent exactly, so rows come out of the index without a sort.
        query(
          `SELECT ${COLUMNS} FROM agent_sessions ORDER BY updated_at DESC, activity DESC LIMIT ? OFFSET ?`,
          [limit ?? -1, offset ?? 0],
        )
      : // One range of agent_sessions_owner, in its order: other owners' rows are never read.
        query(
          `SELECT ${COLUMNS} FROM agent_sessions WHERE owner = ?
           ORDER BY updated_at DESC, activity DESC LIMIT ? OFFSET ?`,
          [owner, limit ?? -1, offset ?? 0],
        ),
  // A range of the UNIQUE index on id per page, in SQLite's byte order of the ids; with a source, a range of
  // agent_sessions_source (source, id), so the sessions of other sources are never read.
  scan: (pageSize, source, after) => {
    const of = source === undefined ? [] : [source];
    if (after === null) {
      const where = source === undefined ? "" : " WHERE source = ?";
      return query(`SELECT ${COLUMNS} FROM agent_sessions${where} ORDER BY id LIMIT ?`, [...of, pageSize]);
    }
    const where = source === undefined ? "WHERE id > ?" : "WHERE source = ? AND id > ?";
    return query(`SELECT ${COLUMNS} FROM agent_sessions ${where} ORDER BY id LIMIT ?`, [
      ...of,
      after,
      pageSize,
    ]);
  },
  count: () => query("SELECT COUNT(*) AS n FROM agent_sessions"),
  change: (id, change) =>
    change
      ? update(`${change.field} = ?`, [change.value], id, ` AND ${ownerGuardSqlite}`, guardOf(change.guard))
      : update("", [], id),
  usage: (id, usage) => update(USAGE_SET, usageDeltas(usage), id, ` AND ${USAGE_FITS}`, usageBounds(usage)),
  // The transaction's write lock keeps the row as read.
  counters: (id) => query(`SELECT ${USAGE_COUNTERS.join(", ")} FROM agent_sessions WHERE id = ?`, [id]),
  pin: (id, pinned) =>
    query(`UPDATE agent_sessions SET pinned = ? WHERE id = ? RETURNING ${COLUMNS}`, [pinned ? 1 : 0, id]),
};
