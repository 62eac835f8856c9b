/**
 * The statements of graph items (steps.ts), written once for both engines over what an engine hands a room
 * (src/sql/room-engine.ts: its table names, placeholders, the owner's write key and guard); what differs by engine
 * is the small data of {@link DIALECT}. The namespace is its labels joined by "." (a label holds none), compared in
 * byte order (SQLite's default, Postgres's `COLLATE "C"`), so a prefix's items are one range of the primary key
 * (owner, namespace, key); store-wide reads use the namespace index. On Citus the table is distributed by owner (the
 * room's owner data): every statement of one owner is routed to its node; the store-wide reads (no owner named) and
 * the sweep's look-up of owners fan out.
 */
import type { GraphItem, GraphItemDraft, GraphScope } from "../../contract/graph-items.js";
import type { OwnerWrite } from "../../store/crypto/write-guard.js";
import { command, query, type Statement } from "../program.js";
import type { Params, RoomEngine } from "../room-engine.js";
import type { GraphItemStatements } from "./steps.js";

/** What differs by engine besides placeholders: the name of the proposed row, and the count's type. */
const DIALECT = {
  sqlite: { excluded: "excluded", count: "count(*)" },
  // Postgres's count is a bigint, which the driver answers as text.
  postgres: { excluded: "EXCLUDED", count: "count(*)::integer" },
} as const;

/** When an item written at `now` expires: null without a time to live. */
const expiryOf = (item: GraphItemDraft, now: number): number | null =>
  item.ttlMs === null ? null : now + item.ttlMs;

const COLUMNS = "owner, namespace, key, value, fields, created_at, updated_at, expires_at, ttl_ms";

// The scope's condition: its owner, then its prefix as a range with the prefix itself or below it.
function scoped(p: Params, scope: GraphScope): string {
  const parts: string[] = [];
  if (scope.owner !== null) parts.push(`owner = ${p.bind(scope.owner, "text")}`);
  if (scope.prefix !== "") {
    const prefix = p.bind(scope.prefix, "text");
    const below = p.bind(`${scope.prefix}/`, "text");
    // Bound in the text's order (SQLite's placeholders are positional); Postgres reads the prefix's number twice.
    const again = p.again(prefix, scope.prefix);
    const above = p.bind(`${scope.prefix}.`, "text");
    parts.push(
      `namespace >= ${prefix} AND namespace < ${below} AND (namespace = ${again} OR namespace > ${above})`,
    );
  }
  return parts.length ? `${parts.join(" AND ")} AND ` : "";
}

const live = (p: Params, now: number) => `(expires_at IS NULL OR expires_at > ${p.bind(now, "bigint")})`;

/** The item's key columns' condition (owner, namespace, key). */
const keyed = (p: Params, owner: string, namespace: string, key: string) =>
  `owner = ${p.bind(owner)} AND namespace = ${p.bind(namespace)} AND key = ${p.bind(key)}`;

/** The statement table of graph items over engine `e`. */
export function graphItemStatements(e: RoomEngine): GraphItemStatements {
  const d = DIALECT[e.kind];
  const items = e.table("agent_graph_items");
  const made = (build: (p: Params) => string, rows = true): Statement => {
    const p = e.params();
    const sql = build(p);
    return rows ? query(sql, p.values) : command(sql, p.values);
  };
  // A guarded INSERT … SELECT of the row's values (`times`: created_at, updated_at), then `conflict`.
  const write = (
    item: GraphItemDraft,
    stored: string,
    times: (p: Params) => string,
    expires: number | null,
    guard: OwnerWrite,
    conflict: string,
  ) =>
    made((p) => {
      const key = [item.owner, item.namespace, item.key, stored, item.fields].map((v) => p.bind(v, "text"));
      const values = `${key.join(", ")}, ${times(p)}, ${p.bind(item.ttlMs, "bigint")}, ${p.bind(expires, "bigint")}`;
      const g = e.ownerRowGuard(p, guard);
      return `${g.with}INSERT INTO ${items} (owner, namespace, key, value, fields, created_at, updated_at, ttl_ms, expires_at)
       SELECT ${values}${g.where}
       ON CONFLICT (owner, namespace, key) ${conflict}
       RETURNING 1 AS n`;
    });
  const x = d.excluded;
  return {
    writeKey: (owner, where, fresh) => e.writeKey(owner, where, fresh),
    upsert: (item, stored, now, guard) =>
      write(
        item,
        stored,
        (p) => {
          const at = p.bind(now, "bigint");
          return `${at}, ${p.again(at, now)}`;
        },
        expiryOf(item, now),
        guard,
        `DO UPDATE SET value = ${x}.value, fields = ${x}.fields,
         updated_at = ${x}.updated_at, ttl_ms = ${x}.ttl_ms, expires_at = ${x}.expires_at`,
      ),
    insert: (item: GraphItem, stored, guard) =>
      write(
        item,
        stored,
        (p) => `${p.bind(item.createdAt, "bigint")}, ${p.bind(item.updatedAt, "bigint")}`,
        item.expiresAt,
        guard,
        "DO NOTHING",
      ),
    remove: (owner, namespace, key) =>
      made((p) => `DELETE FROM ${items} WHERE ${keyed(p, owner, namespace, key)}`, false),
    get: (owner, namespace, key, now) =>
      made(
        (p) => `SELECT ${COLUMNS} FROM ${items} WHERE ${keyed(p, owner, namespace, key)} AND ${live(p, now)}`,
      ),
    refresh: (owner, namespace, key, now) =>
      made((p) => {
        const at = p.bind(now, "bigint");
        return `UPDATE ${items} SET expires_at = ${at} + ttl_ms
         WHERE ${keyed(p, owner, namespace, key)} AND ttl_ms IS NOT NULL AND expires_at > ${p.again(at, now)}`;
      }, false),
    page: (scope, after, now, limit) =>
      made((p) => {
        const where = scoped(p, scope);
        const cursor = after
          ? `(namespace, key) > (${p.bind(after[0], "text")}, ${p.bind(after[1], "text")}) AND `
          : "";
        return `SELECT ${COLUMNS} FROM ${items} WHERE ${where}${cursor}${live(p, now)}
         ORDER BY namespace, key LIMIT ${p.bind(limit, "integer")}`;
      }),
    namespaces: (scope, after, now, limit) =>
      made((p) => {
        const where = scoped(p, scope);
        const cursor = after !== null ? `namespace > ${p.bind(after, "text")} AND ` : "";
        return `SELECT DISTINCT namespace FROM ${items} WHERE ${where}${cursor}${live(p, now)}
         ORDER BY namespace LIMIT ${p.bind(limit, "integer")}`;
      }),
    expiredOwners: (now, limit) =>
      made(
        (p) =>
          `SELECT DISTINCT owner FROM ${items} WHERE expires_at <= ${p.bind(now, "bigint")} LIMIT ${p.bind(limit, "integer")}`,
      ),
    deleteExpired: (owner, now) =>
      made(
        (p) =>
          `DELETE FROM ${items} WHERE owner = ${p.bind(owner)} AND expires_at <= ${p.bind(now, "bigint")} RETURNING 1 AS n`,
      ),
    eraseOwner: (owner) =>
      made((p) => `DELETE FROM ${items} WHERE owner = ${p.bind(owner)} RETURNING 1 AS n`),
    count: () => query(`SELECT ${d.count} AS n FROM ${items}`),
    owners: (after, limit) =>
      made((p) => {
        const cursor = after === null ? "" : `WHERE owner > ${p.bind(after)} `;
        return `SELECT DISTINCT owner FROM ${items} ${cursor}ORDER BY owner LIMIT ${p.bind(limit, "integer")}`;
      }),
  };
}
