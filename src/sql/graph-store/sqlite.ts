/**
 * SQLite's statements of graph items (steps.ts) and its store class (its table and room in room.ts). The namespace
 * is its labels joined by "." (a label holds none), so a prefix's items are one range of the primary key (owner,
 * namespace, key); store-wide reads use the namespace index.
 */

import type { GraphScope } from "../../contract/graph-items.js";
import { SessionError } from "../../errors.js";
import { ownerGuardParams, ownerWrite } from "../../store/crypto/write-guard.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { ownerGuardSqlite } from "../engines/sqlite/owner-guard.js";
import { call, runInTransaction, runProgram } from "../engines/sqlite/program.js";
import { command, query } from "../program.js";
import { expiryOf, itemKeyParams } from "./row-params.js";
import { type GraphEngine, type GraphItemStatements, SqlGraphItems } from "./steps.js";

const COLUMNS = "owner, namespace, key, value, fields, created_at, updated_at, expires_at, ttl_ms";
const LIVE = "(expires_at IS NULL OR expires_at > ?)";

// The scope's condition and parameters: its owner, then its prefix as a range with the prefix itself or below it.
function scoped(scope: GraphScope): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (scope.owner !== null) {
    parts.push("owner = ?");
    params.push(scope.owner);
  }
  if (scope.prefix !== "") {
    parts.push("namespace >= ? AND namespace < ? AND (namespace = ? OR namespace > ?)");
    params.push(scope.prefix, `${scope.prefix}/`, scope.prefix, `${scope.prefix}.`);
  }
  return { sql: parts.length ? `${parts.join(" AND ")} AND ` : "", params };
}

/** The statement table of graph items on SQLite. */
export const sqliteGraphItems: GraphItemStatements = {
  // Read in the write's transaction, which holds the write lock from here on (BEGIN IMMEDIATE).
  writeKey: (owner, where) => call((driver) => [{ write: ownerWrite(driver.keys, owner, where) }]),
  upsert: (item, stored, now, write) =>
    query(
      `INSERT INTO agent_graph_items (owner, namespace, key, value, fields, created_at, updated_at, ttl_ms, expires_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${ownerGuardSqlite}
       ON CONFLICT (owner, namespace, key) DO UPDATE SET value = excluded.value, fields = excluded.fields,
         updated_at = excluded.updated_at, ttl_ms = excluded.ttl_ms, expires_at = excluded.expires_at
       RETURNING 1 AS n`,
      [
        ...itemKeyParams(item, stored),
        now,
        now,
        item.ttlMs,
        expiryOf(item, now),
        ...ownerGuardParams(write.guard),
      ],
    ),
  remove: (owner, namespace, key) =>
    command("DELETE FROM agent_graph_items WHERE owner = ? AND namespace = ? AND key = ?", [
      owner,
      namespace,
      key,
    ]),
  get: (owner, namespace, key, now) =>
    query(
      `SELECT ${COLUMNS} FROM agent_graph_items WHERE owner = ? AND namespace = ? AND key = ? AND ${LIVE}`,
      [owner, namespace, key, now],
    ),
  refresh: (owner, namespace, key, now) =>
    command(
      `UPDATE agent_graph_items SET expires_at = ? + ttl_ms
       WHERE owner = ? AND namespace = ? AND key = ? AND ttl_ms IS NOT NULL AND expires_at > ?`,
      [now, owner, namespace, key, now],
    ),
  page: (scope, after, now, limit) => {
    const where = scoped(scope);
    return query(
      `SELECT ${COLUMNS} FROM agent_graph_items WHERE ${where.sql}${after ? "(namespace, key) > (?, ?) AND " : ""}${LIVE}
       ORDER BY namespace, key LIMIT ?`,
      [...where.params, ...(after ?? []), now, limit],
    );
  },
  namespaces: (scope, after, now, limit) => {
    const where = scoped(scope);
    return query(
      `SELECT DISTINCT namespace FROM agent_graph_items WHERE ${where.sql}${after !== null ? "namespace > ? AND " : ""}${LIVE}
       ORDER BY namespace LIMIT ?`,
      [...where.params, ...(after !== null ? [after] : []), now, limit],
    );
  },
  expiredOwners: (now, limit) =>
    query("SELECT DISTINCT owner FROM agent_graph_items WHERE expires_at <= ? LIMIT ?", [now, limit]),
  deleteExpired: (owner, now) =>
    query("DELETE FROM agent_graph_items WHERE owner = ? AND expires_at <= ? RETURNING 1 AS n", [owner, now]),
  eraseOwner: (owner) => query("DELETE FROM agent_graph_items WHERE owner = ? RETURNING 1 AS n", [owner]),
  count: () => query("SELECT count(*) AS n FROM agent_graph_items"),
  owners: (after, limit) =>
    after === null
      ? query("SELECT DISTINCT owner FROM agent_graph_items ORDER BY owner LIMIT ?", [limit])
      : query("SELECT DISTINCT owner FROM agent_graph_items WHERE owner > ? ORDER BY owner LIMIT ?", [
          after,
          limit,
        ]),
  insert: (item, stored, write) =>
    query(
      `INSERT INTO agent_graph_items (owner, namespace, key, value, fields, created_at, updated_at, ttl_ms, expires_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${ownerGuardSqlite}
       ON CONFLICT (owner, namespace, key) DO NOTHING RETURNING 1 AS n`,
      [
        ...itemKeyParams(item, stored),
        item.createdAt,
        item.updatedAt,
        item.ttlMs,
        item.expiresAt,
        ...ownerGuardParams(write.guard),
      ],
    ),
};

/** SQLite's graph items over a store's connection (its keys read through it, in the write's transaction). */
export class SqliteGraphItems extends SqlGraphItems {
  constructor(driver: SqlDriver) {
    super(engine(driver));
  }
}

const engine = (driver: SqlDriver): GraphEngine => ({
  statements: sqliteGraphItems,
  run: async (program, transaction) =>
    transaction ? runInTransaction(driver, program) : runProgram(driver, program()),
  withKeys: async (use) => {
    if (!driver.keys) throw new SessionError("STORAGE", "This SQLite connection has no keys");
    return use(driver.keys);
  },
});
