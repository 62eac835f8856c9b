/**
 * The last step of a Postgres session import (import.ts), one transaction once the batches committed: the latest
 * leaf (the shared program of store/transfer/sql-import.ts over Postgres' statements) and the import's `reset`
 * change-log row, which commit together.
 */

import { command, prepared, query } from "../../store/sql/program.js";
import { type LeafStatements, setLeaf } from "../../store/transfer/sql-import.js";
import type { Executor } from "../connection/client.js";
import { runProgram } from "../connection/program.js";
import { onSession, sessionParam } from "../connection/route.js";
import { statement, type Tables } from "../connection/tables.js";
import type { PostgresChangeLog } from "../feed/change-log.js";
import { newestLeafSql, refreshHeadSql } from "../writes.js";

// In the Citus layout each statement also names the session (its last parameter), to run on its node alone.
const lockNumSql = statement(
  (t) => `SELECT num FROM ${t.heads} WHERE num = $1::bigint${onSession(t, null, "$2::text")} FOR UPDATE`,
);
const leafSql = statement(
  (t) =>
    `SELECT seq FROM ${t.messages} WHERE session_num = $1::bigint AND id = $2${onSession(t, null, "$3::text")}`,
);

// The head is locked as every session write locks it, so an appender waits for the new leaf.
function leafStatements(t: Tables): LeafStatements {
  const own = (id: string) => sessionParam(t, id);
  return {
    lock: ({ num, id }) => query(lockNumSql(t), [num, ...own(id)]),
    leaf: ({ num, id }, leafId) => prepared(leafSql(t), [num, leafId, ...own(id)]),
    newest: ({ num, id }) => prepared(newestLeafSql(t), [num, ...own(id)]),
    point: ({ num, id }, leaf, now) => ({
      ...command(refreshHeadSql(t), [num, leaf, 0, now, ...own(id)]),
      prepared: true,
    }),
  };
}

/**
 * The last step of an import that inserted, one transaction: the latest leaf (when messages were added) and the
 * import's `reset` row in `log`, so the two commit together. Answers the row's cursor (none without a log).
 */
export async function finishImport(
  executor: Executor,
  t: Tables,
  num: string,
  header: { id: string; leafId: string | null },
  setsLeaf: boolean,
  log: PostgresChangeLog | undefined,
): Promise<number | undefined> {
  if (!setsLeaf && !log) return undefined;
  return executor.transaction(async (q) => {
    if (setsLeaf) await runProgram(q, setLeaf(leafStatements(t), { num, id: header.id }, header.leafId));
    return log?.recordIn(q, { sessionId: header.id, type: "reset", ids: [] });
  });
}
