/**
 * The lock every change of a store's table layout holds (migrations, distribution), on the ground floor: the Citus
 * layout and the vector tables take it without importing the migrations.
 */
import type { Query } from "./client.js";
import type { Tables } from "./tables.js";

// A 31-bit hash of the schema and prefix: concurrent migrations of the same tables serialise, others do not.
function lockKey(t: Tables): number {
  let hash = 0x811c9dc5;
  for (const ch of `${t.schema ?? ""}.${t.prefix}`) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193);
  return hash & 0x7fffffff;
}

/** Takes the transaction-scoped lock every change of these tables' layout holds (migrations, distribution). */
export async function migrationLock(query: Query, t: Tables): Promise<void> {
  await query("SELECT pg_advisory_xact_lock($1::integer, $2::integer)", [0x61677373, lockKey(t)]);
}
