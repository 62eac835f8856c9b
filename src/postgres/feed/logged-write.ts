import type { PostgresChangeLog } from "../../sql/change-log/postgres.js";
import type { LoggedAppend } from "../../sql/change-log/postgres-append-log.js";
import type { Executor } from "../../sql/engines/postgres/client.js";
import type { Change } from "../../store/feed/change-rows.js";
import type { Written } from "../../store/written.js";

/**
 * What an append or import needs to insert its own change-log row in its statement (append-log.ts), or undefined
 * for a store without a change log.
 */
export async function appendLog(
  log: PostgresChangeLog | undefined,
  kind: "append" | "import",
): Promise<LoggedAppend | undefined> {
  return log ? { log: await log.statementLog(), kind } : undefined;
}

/**
 * Records the change `change` makes of a write's result inside that write's transaction (`executor` is joined to
 * it): the write and its row commit together. Answers the write's record with the row's cursor (`logged`).
 */
export async function logInTransaction<T, W extends Written<T>>(
  log: PostgresChangeLog | undefined,
  executor: Executor,
  sessionId: string,
  change: (result: T) => Change | null,
  written: W,
): Promise<W> {
  const logged = log ? change(written.result) : null;
  if (!log || !logged) return written;
  return { ...written, logged: await log.recordIn(executor.query, { ...logged, sessionId }) };
}
