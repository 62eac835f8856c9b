/**
 * The registry's erase on Postgres: one transaction that runs the erasure (sql/erase/steps.ts: it locks the
 * session's head, then its registry row, checks the condition and erases) and logs `erased` in it.
 */

import type { PostgresChangeLog } from "../sql/change-log/postgres.js";
import { logNames } from "../sql/change-log/postgres-append-log.js";
import { deleteKeyed } from "../sql/context-records/postgres.js";
import type { Executor } from "../sql/engines/postgres/client.js";
import { runProgram } from "../sql/engines/postgres/program.js";
import type { Tables } from "../sql/engines/postgres/tables.js";
import { type PostgresEraseHelpers, postgresErase } from "../sql/erase/postgres.js";
import { eraseUnder } from "../sql/erase/steps.js";
import { postgresFacts } from "../sql/facts/postgres.js";
import { releaseSession } from "../sql/media/postgres.js";
import { forgetStreamSql } from "../sql/streams/postgres.js";
import { vectorTables } from "../sql/vectors/postgres-schema.js";
import type { ErasureCondition } from "../store/erasure.js";
import type { RegistryErasure } from "../store/registry-base.js";
import { cursorOf } from "../store/written.js";

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
    const counts = await runProgram(
      query,
      eraseUnder(postgresErase(t, eraseHelpers(t)), id, keys, condition),
    );
    if (counts === null) return null;
    const erased = { sessionId: id, type: "erased" as const, ids: [] };
    return { counts, logged: cursorOf(log ? await log.recordIn(query, erased) : undefined) };
  });
}

/** What the erasure program runs of this engine's other modules on the tables `t` (see PostgresEraseHelpers). */
function eraseHelpers(t: Tables): PostgresEraseHelpers {
  return {
    vectors: vectorTables(t).vectors,
    changes: logNames(t).table,
    release: (query, session) => releaseSession(query, t, session),
    deleteKeyed: (query, id, keys) => deleteKeyed(query, t, id, keys),
    facts: postgresFacts(t),
    forgetStream: forgetStreamSql(t),
  };
}
