/**
 * The vector channel in the Citus layout (docs/POSTGRES.md, "Past one server"): the vector table distributed by
 * session id beside the messages, the session ids a batch of writes routes by, and the active paths a nearest read
 * keeps, walked one session at a time (Citus refuses a recursive CTE that fans out).
 */

import { citusShards } from "../../store/owner-data.js";
import { type Executor, sqlState } from "../engines/postgres/client.js";
import { migrationLock } from "../engines/postgres/migration-lock.js";
import { qualified, type Tables } from "../engines/postgres/tables.js";
import { pathCte } from "../engines/postgres/tree.js";
import { POSTGRES_OWNER_DATA } from "../owner-data/postgres.js";
import { tableStatements, type VectorTables, vectorTables } from "./postgres-schema.js";

/**
 * Creates and distributes the vector tables when a distributed store with an embedder is opened, before its first
 * write: distributing them in the channel's first tick, while the store's appends ran, made Citus cancel it as the
 * victim of a distributed deadlock again and again in the tests.
 */
export async function prepareVectors(executor: Executor, t: Tables): Promise<void> {
  const v = vectorTables(t);
  for (const statement of tableStatements(v)) await executor.query(statement);
  await distributeVectors(executor, t, v);
}

/** The vector table's placement in the declaration (sql/owner-data/postgres.ts): by session id, co-located with the heads. */
const VECTORS_SHARD = (() => {
  const shard = citusShards(POSTGRES_OWNER_DATA).find((s) => s.table === "agent_message_vectors");
  if (!shard || shard.colocate === "none")
    throw new Error("agent_message_vectors must be declared by-session");
  return shard;
})();

/** Distributes the (new) vector table by session id, co-located with the heads and messages; once, under the lock. */
export async function distributeVectors(executor: Executor, t: Tables, v: VectorTables): Promise<void> {
  const sharded = async (query: Executor["query"]) => {
    const [row] = await query<{ done: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1)) AS done",
      [v.vectors],
    );
    return row?.done === true;
  };
  // Appends running meanwhile can make Citus pick the distribution as the victim of a distributed deadlock (seen
  // in the tests: the channel's first tick runs while the session is written); it had done nothing, so it is retried.
  for (let attempt = 1; ; attempt++) {
    if (await sharded(executor.query)) return;
    try {
      await executor.transaction(async (query) => {
        await migrationLock(query, t);
        if (await sharded(query)) return;
        await query("SELECT create_distributed_table($1, $2, colocate_with => $3)", [
          v.vectors,
          VECTORS_SHARD.column,
          qualified(t, VECTORS_SHARD.colocate),
        ]);
      });
      return;
    } catch (error) {
      if (attempt >= DISTRIBUTE_ATTEMPTS || sqlState(error) !== DEADLOCK) throw error;
    }
  }
}

const DISTRIBUTE_ATTEMPTS = 5;
const DEADLOCK = "40P01";

/** The session id of each session number among `nums` (one fanned-out read), for statements routed by session. */
export async function sessionIdsOf(
  executor: Executor,
  t: Tables,
  nums: readonly number[],
): Promise<Map<number, string>> {
  if (nums.length === 0) return new Map();
  const rows = await executor.query<{ num: string | number; session_id: string }>(
    `SELECT num, session_id FROM ${t.heads} WHERE num = ANY($1::bigint[])`,
    [[...new Set(nums)]],
  );
  return new Map(rows.map((row) => [Number(row.num), row.session_id]));
}

/** The seqs on the active paths of the sessions `nums`, each walked by a statement routed to its session. */
export async function activePathSeqs(
  executor: Executor,
  t: Tables,
  nums: readonly number[],
): Promise<number[]> {
  const seqs: number[] = [];
  for (const sessionId of (await sessionIdsOf(executor, t, nums)).values()) {
    const leaf = `(SELECT leaf_seq FROM ${t.heads} WHERE session_id = $1)`;
    const rows = await executor.query<{ seq: number }>(
      `WITH RECURSIVE ${pathCte(t.messages, leaf, t.layout.scope("$1::text"))} SELECT seq::float8 AS seq FROM path`,
      [sessionId],
    );
    seqs.push(...rows.map((row) => Number(row.seq)));
  }
  return seqs;
}
