/**
 * The records of context rows on Postgres (contract/context.ts ContextRecord): the `session_id` and `owner` columns
 * of blocks and entries, added by schema step 22 with their partial indexes and a backfill of the rows stored
 * before (context/legacy-records.ts). The steps that list and erase by them are sql/context-records/steps.ts over
 * sql/context-records/postgres.ts (which also holds the upsert's SET that keeps a record), run here for the
 * erasure by key, the known ids and the backfill, and by context-store.ts for the keys and the erasure by record.
 */
import { LEGACY_RULE } from "../context/legacy-records.js";
import { postgresRecords } from "../sql/context-records/postgres.js";
import {
  backfillRecords as backfillProgram,
  deleteKeyed as deleteKeyedProgram,
  type KnownIds,
  knownIds as knownIdsProgram,
} from "../sql/context-records/steps.js";
import type { Query } from "../sql/engines/postgres/client.js";
import { runProgram } from "../sql/engines/postgres/program.js";
import { quote, type Tables } from "../sql/engines/postgres/tables.js";

/**
 * Deletes every block and entry recorded for session `id` and the unrecorded blocks of `keys` and entries filed
 * under them, in the caller's transaction (one statement per table: on Citus each is sharded by its own column).
 */
export function deleteKeyed(
  query: Query,
  t: Tables,
  id: string,
  keys: readonly string[],
): Promise<{ blocks: number; entries: number }> {
  return runProgram(query, deleteKeyedProgram(postgresRecords(t), id, keys));
}

/** Which of `ids` are stored sessions (registered or holding a head), and which are owners of registered ones. */
export function knownIds(query: Query, t: Tables, ids: readonly string[]): Promise<KnownIds> {
  return runProgram(query, knownIdsProgram(postgresRecords(t), ids));
}

/** Schema step 22's statements: the columns and their partial indexes. */
export function recordColumnsSql(t: Tables): string[] {
  return [t.blocks, t.entries].flatMap((table, i) => {
    const base = i === 0 ? "agent_context_blocks" : "agent_search_entries";
    return [
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS session_id text`,
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS owner text`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}${base}_session`)} ON ${table} (session_id) WHERE session_id IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}${base}_owner`)} ON ${table} (owner) WHERE owner IS NOT NULL`,
    ];
  });
}

/** Schema step 22's backfill: the rows stored before are given a record where the old rule is unambiguous. */
export function backfillRecords(query: Query, t: Tables): Promise<void> {
  return runProgram(query, backfillProgram(postgresRecords(t), LEGACY_RULE));
}
