/**
 * Postgres's statements of graph items (steps.ts) and its store class (its table and room in room.ts). The
 * namespace is its labels joined by "." (a label holds none) and compared in byte order (`COLLATE "C"`), so a
 * prefix's items are one range of the primary key (owner, namespace, key). On Citus the table is distributed by
 * owner (the room's owner data): every statement of one owner is routed to its node; the store-wide reads (no
 * owner named) and the sweep's look-up of owners fan out.
 */

import type { GraphScope } from "../../contract/graph-items.js";
import { SessionError } from "../../errors.js";
import type { ContentKeys } from "../../store/crypto/content-keys.js";
import { ownerWrite } from "../../store/crypto/write-guard.js";
import type { Executor, Query } from "../engines/postgres/client.js";
import { ownerRowGuard, ownerRowGuardParams } from "../engines/postgres/owner-guard.js";
import { call, runInTransaction, runProgram } from "../engines/postgres/program.js";
import { qualified, type Tables } from "../engines/postgres/tables.js";
import { command, query } from "../program.js";
import { expiryOf, itemKeyParams } from "./row-params.js";
import { type GraphEngine, type GraphItemStatements, SqlGraphItems } from "./steps.js";

/** What graph items need of the store's keys (sql/sealing/postgres.ts PostgresKeys, handed in with the tables). */
export interface GraphKeys {
  guarded<T>(query: Query, use: (keys: ContentKeys) => T, fresh?: boolean): Promise<{ value: T }>;
  run<T>(query: Query, use: (keys: ContentKeys) => T): Promise<T>;
}

/** The tables a graph item statement names, with the store's keys. */
export type GraphTables = Tables & { readonly keys?: GraphKeys | undefined };

/** The graph items table's name. */
export const graphItemsTable = (t: Tables): string => qualified(t, "agent_graph_items");

const COLUMNS = "owner, namespace, key, value, fields, created_at, updated_at, expires_at, ttl_ms";

// The scope's condition from parameter `$at` on: its owner, then its prefix as a range with the prefix or below it.
function scoped(scope: GraphScope, at: number): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  let n = at;
  if (scope.owner !== null) {
    parts.push(`owner = $${n++}::text`);
    params.push(scope.owner);
  }
  if (scope.prefix !== "") {
    parts.push(
      `namespace >= $${n}::text AND namespace < $${n + 1}::text AND (namespace = $${n}::text OR namespace > $${n + 2}::text)`,
    );
    params.push(scope.prefix, `${scope.prefix}/`, `${scope.prefix}.`);
    n += 3;
  }
  return { sql: parts.length ? `${parts.join(" AND ")} AND ` : "", params };
}

/** The statement table of graph items on Postgres. */
export function postgresGraphItems(t: GraphTables): GraphItemStatements {
  const items = graphItemsTable(t);
  const live = (at: number) => `(expires_at IS NULL OR expires_at > $${at}::bigint)`;
  return {
    // Read in the write's transaction; the upsert's guard refuses it if the owner's key changed since.
    writeKey: (owner, where, fresh) =>
      call(async (q) => {
        if (!t.keys) return [{ write: ownerWrite(undefined, owner, where) }];
        const { value } = await t.keys.guarded(q, (k) => ownerWrite(k, owner, where), fresh);
        return [{ write: value }];
      }),
    upsert: (item, stored, now, write) => {
      const guard = ownerRowGuard(t, 10);
      return query(
        `WITH ${guard.ctes}w AS (SELECT 1)
         INSERT INTO ${items} (owner, namespace, key, value, fields, created_at, updated_at, ttl_ms, expires_at)
         SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $6::bigint, $7::bigint,
           $8::bigint FROM w WHERE $9::boolean${guard.and}
         ON CONFLICT (owner, namespace, key) DO UPDATE SET value = EXCLUDED.value, fields = EXCLUDED.fields,
           updated_at = EXCLUDED.updated_at, ttl_ms = EXCLUDED.ttl_ms, expires_at = EXCLUDED.expires_at
         RETURNING 1 AS n`,
        [
          ...itemKeyParams(item, stored),
          now,
          item.ttlMs,
          expiryOf(item, now),
          true,
          ...ownerRowGuardParams(t, write.guard),
        ],
      );
    },
    remove: (owner, namespace, key) =>
      command(`DELETE FROM ${items} WHERE owner = $1 AND namespace = $2 AND key = $3`, [
        owner,
        namespace,
        key,
      ]),
    get: (owner, namespace, key, now) =>
      query(
        `SELECT ${COLUMNS} FROM ${items} WHERE owner = $1 AND namespace = $2 AND key = $3 AND ${live(4)}`,
        [owner, namespace, key, now],
      ),
    refresh: (owner, namespace, key, now) =>
      command(
        `UPDATE ${items} SET expires_at = $4::bigint + ttl_ms
         WHERE owner = $1 AND namespace = $2 AND key = $3 AND ttl_ms IS NOT NULL AND expires_at > $4::bigint`,
        [owner, namespace, key, now],
      ),
    page: (scope, after, now, limit) => {
      const where = scoped(scope, 1);
      let n = where.params.length + 1;
      const cursor = after ? `(namespace, key) > ($${n++}::text, $${n++}::text) AND ` : "";
      return query(
        `SELECT ${COLUMNS} FROM ${items} WHERE ${where.sql}${cursor}${live(n)}
         ORDER BY namespace, key LIMIT $${n + 1}::integer`,
        [...where.params, ...(after ?? []), now, limit],
      );
    },
    namespaces: (scope, after, now, limit) => {
      const where = scoped(scope, 1);
      let n = where.params.length + 1;
      const cursor = after !== null ? `namespace > $${n++}::text AND ` : "";
      return query(
        `SELECT DISTINCT namespace FROM ${items} WHERE ${where.sql}${cursor}${live(n)}
         ORDER BY namespace LIMIT $${n + 1}::integer`,
        [...where.params, ...(after !== null ? [after] : []), now, limit],
      );
    },
    expiredOwners: (now, limit) =>
      query(`SELECT DISTINCT owner FROM ${items} WHERE expires_at <= $1::bigint LIMIT $2::integer`, [
        now,
        limit,
      ]),
    deleteExpired: (owner, now) =>
      query(`DELETE FROM ${items} WHERE owner = $1 AND expires_at <= $2::bigint RETURNING 1 AS n`, [
        owner,
        now,
      ]),
    eraseOwner: (owner) => query(`DELETE FROM ${items} WHERE owner = $1 RETURNING 1 AS n`, [owner]),
    count: () => query(`SELECT count(*)::integer AS n FROM ${items}`),
    owners: (after, limit) =>
      after === null
        ? query(`SELECT DISTINCT owner FROM ${items} ORDER BY owner LIMIT $1::integer`, [limit])
        : query(`SELECT DISTINCT owner FROM ${items} WHERE owner > $1 ORDER BY owner LIMIT $2::integer`, [
            after,
            limit,
          ]),
    insert: (item, stored, write) => {
      const guard = ownerRowGuard(t, 11);
      return query(
        `WITH ${guard.ctes}w AS (SELECT 1)
         INSERT INTO ${items} (owner, namespace, key, value, fields, created_at, updated_at, ttl_ms, expires_at)
         SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $7::bigint, $8::bigint,
           $9::bigint FROM w WHERE $10::boolean${guard.and}
         ON CONFLICT (owner, namespace, key) DO NOTHING
         RETURNING 1 AS n`,
        [
          ...itemKeyParams(item, stored),
          item.createdAt,
          item.updatedAt,
          item.ttlMs,
          item.expiresAt,
          true,
          ...ownerRowGuardParams(t, write.guard),
        ],
      );
    },
  };
}

/** Postgres's graph items over a store's connection and tables (its keys loaded per operation). */
export class PostgresGraphItems extends SqlGraphItems {
  constructor(ready: () => Promise<Executor>, t: GraphTables) {
    super(engine(ready, t));
  }
}

const engine = (ready: () => Promise<Executor>, t: GraphTables): GraphEngine => ({
  statements: postgresGraphItems(t),
  run: async (program, transaction) => {
    const executor = await ready();
    return transaction ? runInTransaction(executor, program) : runProgram(executor.query, program());
  },
  withKeys: async (use) => {
    // Every store has keys (a keyless one's answer none): none is a store not made by PostgresStore.
    if (!t.keys) throw new SessionError("STORAGE", "This Postgres store has no keys");
    const executor = await ready();
    return t.keys.run(executor.query.bind(executor), use);
  },
});
