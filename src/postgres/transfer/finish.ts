/**
 * The last step of a Postgres session import (import.ts), one transaction once the batches committed: the latest
 * leaf and the import's `reset` change-log row, which commit together.
 */

import { onSession, sessionParam } from "../citus/route.js";
import type { Executor, Query } from "../connection/client.js";
import type { PostgresChangeLog } from "../feed/change-log.js";
import { statement, type Tables } from "../schema.js";
import { newestLeafSql, refreshHeadSql } from "../writes.js";

// In the Citus layout each statement also names the session (its last parameter), to run on its node alone.
const lockNumSql = statement(
  (t) => `SELECT num FROM ${t.heads} WHERE num = $1::bigint${onSession(t, null, "$2::text")} FOR UPDATE`,
);
const leafSql = statement(
  (t) =>
    `SELECT seq FROM ${t.messages} WHERE session_num = $1::bigint AND id = $2${onSession(t, null, "$3::text")}`,
);

// The exported leaf when it is stored; otherwise the newest childless row, as a delete of the tip would choose.
async function setLeaf(query: Query, t: Tables, num: string, header: { id: string; leafId: string | null }) {
  const own = sessionParam(t, header.id);
  if ((await query(lockNumSql(t), [num, ...own])).length === 0) return;
  const [stored] =
    header.leafId === null
      ? []
      : await query<{ seq: string }>(leafSql(t), [num, header.leafId, ...own], true);
  const leaf =
    stored?.seq ??
    (await query<{ seq: string | null }>(newestLeafSql(t), [num, ...own], true))[0]?.seq ??
    null;
  await query(refreshHeadSql(t), [num, leaf, 0, new Date().toISOString(), ...own], true);
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
  return executor.transaction(async (query) => {
    if (setsLeaf) await setLeaf(query, t, num, header);
    return log?.recordIn(query, { sessionId: header.id, type: "reset", ids: [] });
  });
}
