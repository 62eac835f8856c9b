/**
 * The tries of an append statement (append.ts; citus/append-path.ts on a cluster): a try whose statement found its
 * snapshot stale, hit a concurrent insert of the same id or a transient failure answers null and is tried again;
 * after a few, the append runs in a transaction that takes the session's head lock first, so its snapshot is fresh.
 */

import { SessionError } from "../errors.js";
import { type Executor, type Query, sqlState } from "../sql/engines/postgres/client.js";
import { statement, type Tables } from "../sql/engines/postgres/tables.js";
import type { Outcome } from "./append-outcome.js";

/**
 * Locks the head of session `$1`, creating it when missing, and returns its number. Only the append fallback and
 * imports take the lock in a statement of its own; holding it makes the next statement's snapshot fresh.
 */
export const lockSql = statement(
  (t) => `INSERT INTO ${t.heads} AS h (session_id, created_at, updated_at) VALUES ($1, $2, $2)
    ON CONFLICT (session_id) DO UPDATE SET updated_at = h.updated_at RETURNING h.num`,
);

const RETRIES = 4;
// 40001 serialization failure, 40P01 deadlock: possible when the database's default isolation is stricter.
const TRANSIENT = new Set(["40001", "40P01"]);

/** One try of an append: its outcome row, or null to try again. */
export type Attempt = (query: Query) => Promise<Outcome | null>;
/** The statement a try runs and its parameters (drawn afresh per try for a routed call). */
export type StatementOf = (query: Query) => Promise<[string, unknown[]]> | [string, unknown[]];

/** The append a try belongs to: its session, whether it adds to the registry row, and its time. */
export interface AppendTry {
  executor: Executor;
  t: Tables;
  sessionId: string;
  registry: boolean;
  now: string;
}

/** A try of the statement `statementOf` answers (see the module comment for the null answers). */
export function attemptOf({ sessionId, registry }: AppendTry, statementOf: StatementOf): Attempt {
  return async (query) => {
    try {
      const [text, values] = await statementOf(query);
      const [row] = await query<Outcome>(text, values, true);
      // Refused by its key guard (key-guard.ts) is an answer even where the session had no head yet ("retry").
      return row && (row.seq !== null || row.outcome !== "retry" || row.keyed === false) ? row : null;
    } catch (error) {
      const code = sqlState(error);
      if (registry && code === "22012")
        throw new SessionError("NOT_FOUND", `Session not found: ${sessionId}`);
      if (code === "23505" || (code !== undefined && TRANSIENT.has(code))) return null;
      throw error;
    }
  };
}

/** Runs `attempt` until it answers (each try in a transaction of its own when `transactional`), then locked. */
export async function retried(
  { executor, t, sessionId, now }: AppendTry,
  attempt: Attempt,
  transactional: boolean,
): Promise<Outcome | null> {
  let row: Outcome | null = null;
  for (let i = 0; i < RETRIES && !row; i++)
    row = transactional ? await executor.transaction(attempt) : await attempt(executor.query);
  return (
    row ??
    executor.transaction(async (query) => {
      await query(lockSql(t), [sessionId, now]);
      return attempt(query);
    })
  );
}
