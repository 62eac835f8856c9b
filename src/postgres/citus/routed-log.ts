/**
 * The change-log row of an append routed on Citus (citus/append-function.ts). The log is a plain table of the
 * coordinator, which the worker's transaction cannot write, and a log CTE in the append's statement made Citus run
 * that statement as ~10 subplans with a two-phase commit (docs/POSTGRES.md, "The change feed on a cluster"). So the
 * append is a transaction block: the delegated call (forced into the block, `force_delegation`), then the row, in a
 * coordinator statement under the log's advisory lock, with its NOTIFY. A failure before COMMIT (the row's insert,
 * the writer's death) rolls back both. Citus commits the worker's part in one phase, before the coordinator's own
 * commit (its PRE_COMMIT callback): a subscriber never reads the row of a message not visible yet, and only the
 * coordinator failing inside that COMMIT can keep the message without its row.
 */

import { SessionError } from "../../errors.js";
import { type StatementLog, voidValue } from "../../sql/change-log/postgres-append-log.js";
import type { Query } from "../../sql/engines/postgres/client.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import type { Outcome } from "../append-outcome.js";

// $1 origin, $2 session, $3 kind, $4 the ids' JSON, $5 the parent id (NULL: a root), as append-log.ts's CTEs
// insert them.
const logSql = (
  t: Tables,
  log: StatementLog,
) => `WITH l AS (SELECT ${voidValue(t, `pg_advisory_xact_lock(${log.lockKey}::bigint)`)} AS locked),
  i AS (INSERT INTO ${log.table} (origin, session_id, kind, ids, parent_id, data)
    SELECT $1::text, $2::text, $3::text, $4::text, $5::text, NULL FROM l RETURNING seq)
  SELECT seq::text AS seq, ${voidValue(t, `pg_notify('${log.channel}', seq::text)`)} AS notified FROM i`;

/**
 * Wraps `attempt` (append.ts's routed call) so that, run in a transaction, it also inserts the log row of
 * `messageId` when the call inserted it; the row's parent is `parentId` (undefined: the leaf the call went after,
 * which it answers).
 */
export function withLogRow(
  attempt: (query: Query) => Promise<Outcome | null>,
  t: Tables,
  { log, kind }: { log: StatementLog; kind: "append" | "import" },
  sessionId: string,
  messageId: string,
  parentId: string | null | undefined,
): (query: Query) => Promise<Outcome | null> {
  return async (query) => {
    const row = await attempt(query);
    // No row inserted (a duplicate, or a failure `attempt` answers with null: the transaction then rolls back).
    if (!row || row.seq === null) return row;
    const parent = parentId === undefined ? row.leaf_id : parentId;
    const values = [log.origin, sessionId, kind, JSON.stringify([messageId]), parent];
    const [logged] = await query<{ seq: string }>(logSql(t, log), values, true);
    if (!logged) throw new SessionError("STORAGE", `The change log took no row for "${messageId}"`);
    row.logged = logged.seq;
    return row;
  };
}
