/**
 * The embedder's refusals on Postgres (a vector row without a vector whose `failure` holds the reason): the column,
 * and what status() and backfill({ retryFailed }) read and clear.
 */
import type { VectorFailure } from "../../search/vectors/types.js";
import type { Executor } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import { vectorStatus } from "./channel.js";
import { CURRENT, type VectorTables } from "./postgres-schema.js";

/** Messages with a current vector, with a current refusal (`failure`, no vector), and the rest (pending). */
export async function vectorCounts(
  executor: Executor,
  t: Tables,
  v: VectorTables,
): Promise<{ embedded: number; pending: number; failed: number }> {
  const [row] = await executor.query<{
    total: string | number;
    current: string | number;
    failed: string | number;
  }>(
    `SELECT (SELECT count(*) FROM ${t.messages}) AS total, c.current, c.failed FROM (
       SELECT count(*) AS current, count(v.failure) AS failed
       FROM ${v.vectors} v JOIN ${t.messages} m ON ${v.joinOn} WHERE ${CURRENT}) c`,
  );
  return vectorStatus(Number(row?.total ?? 0), Number(row?.current ?? 0), Number(row?.failed ?? 0));
}

/** The newest current refusals, at most `limit`, with their sessions' and messages' ids. */
export function listFailures(
  executor: Executor,
  t: Tables,
  v: VectorTables,
  limit: number,
): Promise<VectorFailure[]> {
  return executor.query<VectorFailure>(
    `SELECT h.session_id AS "sessionId", m.id AS "messageId", v.failure AS reason
     FROM ${v.vectors} v JOIN ${t.messages} m ON ${v.joinOn} JOIN ${t.heads} h ON h.num = m.session_num${v.layout.onSession("h", "m.session_id")}
     WHERE v.failure IS NOT NULL AND ${CURRENT} ORDER BY v.seq DESC LIMIT $1`,
    [limit],
  );
}

/**
 * Adds `failure` to a vector table made before refusals were recorded; asks first, since ALTER TABLE locks the
 * table even when the column exists.
 */
export async function ensureFailureColumn(executor: Executor, v: VectorTables): Promise<void> {
  const [column] = await executor.query<{ present: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass
       AND attname = 'failure' AND NOT attisdropped) AS present`,
    [v.vectors],
  );
  if (!column?.present)
    await executor.query(`ALTER TABLE ${v.vectors} ADD COLUMN IF NOT EXISTS failure text`);
}

/** Forgets every refusal: those messages are pending again. */
export async function clearFailures(executor: Executor, v: VectorTables): Promise<void> {
  await executor.query(`DELETE FROM ${v.vectors} WHERE failure IS NOT NULL`);
}
