/**
 * Messages by their own time (`agent-session/mastra`, docs/MASTRA.md): a Mastra thread lists its messages in the
 * order of the caller's `createdAt`, by pages and date ranges, and finds a message by its id alone. The messages are
 * the session's own rows (`agent_messages`, whose `created_at` is the message's time); two indexes serve these reads
 * (a session's rows by time, a row by id), so a page reads its ids from an index range and nothing else. Written once
 * for both engines: an engine gives its placeholders and table names (sqlite.ts, postgres.ts beside this file).
 */

/** A stored message found by id: its session, its time as the engine keeps it, its insertion order. */
export interface LocatedMessage {
  id: string;
  sessionId: string;
  createdAt: unknown;
  seq: unknown;
}

/** A time bound of a page: the instant (ISO-8601) and whether it is excluded. */
export interface TimeBound {
  at: string;
  exclusive: boolean;
}

/** What a page or a count covers: sessions, and a time range. */
export interface TimedScope {
  sessionIds: readonly string[];
  start?: TimeBound | undefined;
  end?: TimeBound | undefined;
}

/**
 * One statement: its text and parameters. `prepared`: a statement whose plan does not depend on its values, which
 * may be a named prepared statement (planned once, not on every run). The others are not: Postgres settles on a
 * generic plan after five runs, and one made on tables not analyzed since they were nearly empty scans every message
 * to find a few ids (docs/PERFORMANCE.md, "Does a save cost more as the thread grows?").
 */
export interface TimedStatement {
  sql: string;
  params: unknown[];
  prepared?: boolean;
}

/** How an engine writes a statement: its tables and the n-th placeholder (1-based). */
export interface TimedDialect {
  messages: string;
  heads: string;
  placeholder(n: number): string;
  /** The cast of a time parameter ("" on SQLite, whose times are ISO text). */
  timeCast: string;
  /** The join of a message `m` to its head `h` (Citus adds the session id both carry, so the join stays on a shard). */
  joinHead: string;
  /** Ids as one array parameter (`= ANY($1)`: one statement text) rather than a placeholder each. */
  idArray?: boolean;
  /**
   * With `idArray`: each id probed alone on the id index (a lateral look-up behind `OFFSET 0`, which the planner
   * cannot turn into a join that scans the messages) and each row's head on its key, so the look-up's plan is the
   * same for any ids and any table size, and it is prepared once: a save on one server spends no planning on it
   * (~0.14–0.27 ms of the server's time a save, planned with its values).
   */
  probeIds?: boolean;
}

// The rows of a scope: its sessions' messages within the time range, and the parameters so far.
function scoped(d: TimedDialect, scope: TimedScope): TimedStatement {
  const params: unknown[] = [...scope.sessionIds];
  const marks = scope.sessionIds.map((_, i) => d.placeholder(i + 1)).join(", ");
  let sql = ` FROM ${d.messages} m JOIN ${d.heads} h ON ${d.joinHead} WHERE h.session_id IN (${marks})`;
  for (const [bound, below] of [
    [scope.start, false],
    [scope.end, true],
  ] as const) {
    if (bound === undefined) continue;
    params.push(bound.at);
    const op = below ? (bound.exclusive ? "<" : "<=") : bound.exclusive ? ">" : ">=";
    sql += ` AND m.created_at ${op} ${d.placeholder(params.length)}${d.timeCast}`;
  }
  return { sql, params };
}

/** The statements of timed reads in one engine's dialect. */
export function timedStatements(d: TimedDialect) {
  const columns = "m.id AS id, h.session_id AS session_id, m.created_at AS created_at, m.seq AS seq";
  return {
    /** The stored messages of `ids` in any session: `id, session_id, created_at, seq`. */
    locate(ids: readonly string[]): TimedStatement {
      const from = `SELECT ${columns} FROM ${d.messages} m JOIN ${d.heads} h ON ${d.joinHead}`;
      if (d.idArray && d.probeIds)
        return {
          sql: `SELECT m.id, m.session_id, m.created_at, m.seq FROM unnest(${d.placeholder(1)}::text[]) AS x(id)
            CROSS JOIN LATERAL (SELECT p.id, (SELECT h.session_id FROM ${d.heads} h WHERE h.num = p.session_num)
              AS session_id, p.created_at, p.seq FROM ${d.messages} p WHERE p.id = x.id OFFSET 0) m
            WHERE m.session_id IS NOT NULL`,
          params: [ids],
          prepared: true,
        };
      if (d.idArray)
        return {
          sql: `${from} WHERE m.id = ANY(${d.placeholder(1)}::text[])`,
          params: [ids],
        };
      const marks = ids.map((_, i) => d.placeholder(i + 1)).join(", ");
      return { sql: `${from} WHERE m.id IN (${marks})`, params: [...ids] };
    },
    /** A page of the scope's messages by time (ties by insertion): `id, session_id`. */
    page(scope: TimedScope, descending: boolean, limit: number, offset: number): TimedStatement {
      const { sql, params } = scoped(d, scope);
      const dir = descending ? "DESC" : "ASC";
      params.push(limit, offset);
      return {
        sql: `SELECT ${columns}${sql} ORDER BY m.created_at ${dir}, m.seq ${dir} LIMIT ${d.placeholder(params.length - 1)} OFFSET ${d.placeholder(params.length)}`,
        params,
      };
    },
    /** How many messages the scope holds: `n`. */
    count(scope: TimedScope): TimedStatement {
      const { sql, params } = scoped(d, scope);
      return { sql: `SELECT COUNT(*) AS n${sql}`, params };
    },
    /**
     * Up to `limit` messages of the session next to `from` (its time and insertion order) in time order: before it
     * and itself (`after` false, newest first) or after it (oldest first).
     */
    beside(from: LocatedMessage, after: boolean, limit: number): TimedStatement {
      const p = d.placeholder;
      const op = after ? ">" : "<=";
      const dir = after ? "ASC" : "DESC";
      return {
        sql: `SELECT ${columns} FROM ${d.messages} m JOIN ${d.heads} h ON ${d.joinHead}
          WHERE h.session_id = ${p(1)} AND (m.created_at, m.seq) ${op} (${p(2)}${d.timeCast}, ${p(3)})
          ORDER BY m.created_at ${dir}, m.seq ${dir} LIMIT ${p(4)}`,
        params: [from.sessionId, from.createdAt, from.seq, limit],
      };
    },
  };
}

/** The statements of one engine. */
export type TimedStatements = ReturnType<typeof timedStatements>;

/** A row of `locate`, `page` or `beside`, as its engine answers it. */
export interface TimedRow {
  id: unknown;
  session_id: unknown;
  created_at: unknown;
  seq: unknown;
}

/** The located message of a row. */
export const locatedOf = (row: TimedRow): LocatedMessage => ({
  id: String(row.id),
  sessionId: String(row.session_id),
  createdAt: row.created_at,
  seq: row.seq,
});
