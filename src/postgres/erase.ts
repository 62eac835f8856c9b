/**
 * The registry's erase on Postgres: one transaction that runs the erasure (sql/erase/steps.ts: it locks the
 * session's head, then its registry row, checks the condition and erases) and logs `erased` in it.
 */

import type { Executor } from "../sql/engines/postgres/client.js";
import { runProgram } from "../sql/engines/postgres/program.js";
import type { Tables } from "../sql/engines/postgres/tables.js";
import { eraseUnder } from "../sql/erase/steps.js";
import type { ErasureCondition } from "../store/erasure.js";
import type { RegistryErasure } from "../store/registry-base.js";
import { cursorOf } from "../store/written.js";
import type { PostgresChangeLog } from "./feed/change-log.js";
import { postgresErase } from "./statements/erase.js";

/** Erases session `id` under `condition` and logs it; null: nothing there, condition unmet, or skipped. */
export async function eraseLocked(
  executor: Executor,
  t: Tables,
  log: PostgresChangeLog | undefined,
  id: string,
  keys: readonly string[],
  condition: ErasureCondition,
): Promise<RegistryErasure | null> {
  return executor.transaction(async (query) => {
    const counts = await runProgram(query, eraseUnder(postgresErase(t), id, keys, condition));
    if (counts === null) return null;
    const erased = { sessionId: id, type: "erased" as const, ids: [] };
    return { counts, logged: cursorOf(log ? await log.recordIn(query, erased) : undefined) };
  });
}
