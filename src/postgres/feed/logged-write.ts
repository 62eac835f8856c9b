import { type Change, markLogged } from "../../store/feed/change-rows.js";
import type { AppendRequest } from "../append.js";
import type { Executor } from "../connection/client.js";
import type { PostgresChangeLog } from "./change-log.js";

/**
 * What an append or import needs to insert its own change-log row in its statement (append-log.ts), or undefined
 * for a store without a change log.
 */
export async function appendLog(
  log: PostgresChangeLog | undefined,
  kind: "append" | "import",
): Promise<AppendRequest["log"]> {
  return log ? { log: await log.statementLog(), kind } : undefined;
}

/**
 * Records the change `change` makes of a replacing write's result inside that write's transaction (`executor` is
 * joined to it): the write and its row commit together. The result carries the row's cursor (`markLogged`).
 */
export async function logInTransaction<T extends object>(
  log: PostgresChangeLog | undefined,
  executor: Executor,
  sessionId: string,
  change: (result: T) => Change | null,
  result: T,
): Promise<T> {
  const logged = log ? change(result) : null;
  if (!log || !logged) return result;
  return markLogged(result, await log.recordIn(executor.query, { ...logged, sessionId }));
}
