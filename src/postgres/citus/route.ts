import type { Tables } from "../connection/tables.js";
import type { Scope } from "../tree.js";

/**
 * ` AND <alias>.session_id = <session>` in the Citus layout, nothing on a single node: every reference to a
 * per-session table in a statement names its session, so Citus routes the statement to the one shard that holds
 * it (recursive walks and modifying CTEs run only there). `alias` null: the column unqualified.
 */
export function onSession(t: Tables, alias: string | null, session: string): string {
  return t.distributed ? ` AND ${alias ? `${alias}.` : ""}session_id = ${session}` : "";
}

/** The session column and its value for an INSERT in the Citus layout (`, session_id` / `, <value>`), else none. */
export function sessionColumn(t: Tables, value: string): { column: string; value: string } {
  return t.distributed ? { column: ", session_id", value: `, ${value}` } : { column: "", value: "" };
}

/** The walk {@link Scope} of the session `session` (an SQL expression) in `t`'s layout. */
export function sessionScope(t: Tables, session: string): Scope {
  return (alias) => onSession(t, alias, session);
}

/** The extra parameter a statement takes in the Citus layout to name its session (`[sessionId]`), else none. */
export function sessionParam(t: Tables, sessionId: string): string[] {
  return t.distributed ? [sessionId] : [];
}

/**
 * The walk {@link Scope} of the sessions `sessions` (an SQL text[] expression) in `t`'s layout: Citus routes a
 * statement so scoped to one shard when they all lie on it (citus/shards.ts groups them so).
 */
export function sessionsScope(t: Tables, sessions: string): Scope {
  return (alias) => (t.distributed ? ` AND ${alias ? `${alias}.` : ""}session_id = ANY(${sessions})` : "");
}
