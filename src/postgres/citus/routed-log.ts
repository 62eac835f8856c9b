/**
 * The change-log row of an append routed on Citus (citus/append-function.ts). The log is a plain table of the
 * coordinator, which the worker's transaction cannot write, so the row is inserted after the call, in a statement
 * of its own on the coordinator (under the log's advisory lock, with its NOTIFY), instead of in the append's
 * statement, whose log CTE made Citus run that statement as ~10 subplans with a two-phase commit (docs/POSTGRES.md,
 * "The change feed on a cluster"). What this changes for the feed: the row commits after the message, never with
 * it, so a subscriber never reads the row of a message not visible yet; but a writer that dies between the two
 * (or whose log insert fails) leaves a stored message no subscriber hears of.
 */

import { SessionError } from "../../errors.js";
import type { Outcome } from "../append-outcome.js";
import type { Query } from "../connection/client.js";
import { type StatementLog, voidValue } from "../feed/append-log.js";
import type { Tables } from "../schema.js";

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
 * Inserts the log row of the routed append of `messageId` when it inserted (`row`, the call's outcome, takes the
 * row's cursor); its parent is `parentId` (undefined: the leaf the call went after, which it answers).
 */
export async function logRoutedAppend(
  query: Query,
  t: Tables,
  { log, kind }: { log: StatementLog; kind: "append" | "import" },
  sessionId: string,
  messageId: string,
  parentId: string | null | undefined,
  row: Outcome | null,
): Promise<void> {
  if (!row || row.seq === null) return;
  const [logged] = await query<{ seq: string }>(
    logSql(t, log),
    [
      log.origin,
      sessionId,
      kind,
      JSON.stringify([messageId]),
      parentId === undefined ? row.leaf_id : parentId,
    ],
    true,
  );
  if (!logged) throw new SessionError("STORAGE", `The change log took no row for "${messageId}"`);
  row.logged = logged.seq;
}
