/**
 * The route clauses of a statement in its tables' layout (connection/layout.ts), as the statement builders call
 * them: in the Citus layout every reference to a per-session table names its session, so Citus routes the statement
 * to the one shard that holds it (recursive walks and modifying CTEs run only there); on one server they are empty.
 */
import type { Layout, Scope } from "./layout.js";

/** What the route clauses read of a store's tables. */
type Laid = { layout: Layout };

/** ` AND <alias>.session_id = <session>` in the Citus layout, nothing on a single node (alias null: unqualified). */
export function onSession(t: Laid, alias: string | null, session: string): string {
  return t.layout.onSession(alias, session);
}

/** The session column and its value for an INSERT in the Citus layout (`, session_id` / `, <value>`), else none. */
export function sessionColumn(t: Laid, value: string): { column: string; value: string } {
  return t.layout.sessionColumn(value);
}

/** The walk {@link Scope} of the session `session` (an SQL expression) in `t`'s layout. */
export function sessionScope(t: Laid, session: string): Scope {
  return (alias) => t.layout.onSession(alias, session);
}

/** The extra parameter a statement takes in the Citus layout to name its session (`[sessionId]`), else none. */
export function sessionParam(t: Laid, sessionId: string): string[] {
  return t.layout.routeParams(sessionId);
}

/**
 * The walk {@link Scope} of the sessions `sessions` (an SQL text[] expression) in `t`'s layout: Citus routes a
 * statement so scoped to one shard when they all lie on it (citus/shards.ts groups them so).
 */
export function sessionsScope(t: Laid, sessions: string): Scope {
  return (alias) => t.layout.onSessions(alias, sessions);
}
