import type { Executor, Query } from "../../sql/engines/postgres/client.js";
import { statement, type Tables } from "../../sql/engines/postgres/tables.js";
import { spineArrays, spineCte } from "../../sql/engines/postgres/tree.js";

/**
 * An append after an explicit parent in the Citus layout (append.ts). Citus 13 refuses a recursive CTE in a
 * statement that also holds an INSERT in its WITH ("recursive CTEs are only supported when they contain a filter on
 * the distribution column", although every reference names the session), so the parent's tree columns and skip
 * spine are read first, by a SELECT routed to the session's shard, under the head lock the same transaction takes,
 * and passed to the append statement as parameters: the lock keeps them current until it commits.
 */

const lockSql = statement((t) => `SELECT 1 FROM ${t.heads} WHERE session_id = $1::text FOR UPDATE`);

/**
 * The parent `parentId` of session `session` (SQL expressions): its seq, depth, totals and spine (seqs and depths,
 * nearest first), one row or none. `into` is placed after the select list (PL/pgSQL's `INTO`, append-function.ts).
 */
export function parentRead(t: Tables, session: string, parentId: string, into = ""): string {
  const own = t.layout.scope(session);
  const spine = spineArrays("pspine", "p.seq");
  return `WITH RECURSIVE p AS (
    SELECT m.seq, m.depth, m.jump_seq, m.cum_bytes, m.cum_tokens FROM ${t.heads} h
    JOIN ${t.messages} m ON m.session_num = h.num AND m.id = ${parentId}${own("m")}
    WHERE h.session_id = ${session}
  ),
  ${spineCte(t.messages, "pspine", "SELECT seq, jump_seq FROM p", own)}
  SELECT p.seq, p.depth, p.cum_bytes, p.cum_tokens, ${spine.seq} AS sseq, ${spine.depth} AS sdep${into} FROM p`;
}

const parentSql = statement((t) => parentRead(t, "$1::text", "$2::text"));

/** The parameters {@link parentCtes} reads: the parent's columns, all null when it is not in the session. */
async function lockedParent(
  query: Query,
  t: Tables,
  sessionId: string,
  parentId: string,
): Promise<unknown[]> {
  await query(lockSql(t), [sessionId], true);
  const [row] = await query<{
    seq: string;
    depth: number;
    cum_bytes: string;
    cum_tokens: string;
    sseq: string[];
    sdep: number[];
  }>(parentSql(t), [sessionId, parentId], true);
  return row
    ? [row.seq, row.depth, row.cum_bytes, row.cum_tokens, row.sseq, row.sdep]
    : [null, null, null, null, null, null];
}

/**
 * Runs `attempt` (the append statement) in a transaction, after the head lock and the parent read, whose columns
 * are added to `params`: the lock keeps them current, so the statement's answer is fresh.
 */
export function afterLockedParent<T>(
  executor: Executor,
  t: Tables,
  sessionId: string,
  parentId: string,
  params: unknown[],
  attempt: (query: Query) => Promise<T>,
): Promise<T> {
  return executor.transaction(async (query) => {
    params.push(...(await lockedParent(query, t, sessionId, parentId)));
    return attempt(query);
  });
}

/**
 * The append's `p` CTE over the parameters from `$at` on ({@link lockedParent}), and the spine arrays `par` takes
 * for it: the explicit parent unless it is the head's leaf (then `par` takes the head's cache, as on one node).
 */
export function parentCtes(at: number): { ctes: string; seq: string; depth: string } {
  const ctes = `p AS (
    SELECT $${at}::bigint AS seq, $${at + 1}::integer AS depth, $${at + 2}::bigint AS cum_bytes,
      $${at + 3}::bigint AS cum_tokens FROM locked l
    WHERE $4::text = 'id' AND l.leaf_id IS DISTINCT FROM $3::text AND $${at}::bigint IS NOT NULL
  ),`;
  return { ctes, seq: `$${at + 4}::bigint[]`, depth: `$${at + 5}::integer[]` };
}
