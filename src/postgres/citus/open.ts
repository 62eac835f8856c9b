import type { Executor, Query } from "../../sql/engines/postgres/client.js";
import { migrationLock } from "../../sql/engines/postgres/migration-lock.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { appendSignature, createAppendFunction, hasAppendFunction } from "./append-function.js";
import { distribute } from "./distribute.js";
import { createOwnerGuardFunction, ownerGuardSignature } from "./owner-guard-function.js";
import { unplacedTables } from "./placement.js";

/**
 * Matches the tables to the store's `distributed: true` on open, `sharded` saying whether they are already
 * (sql/engines/postgres/layout-check.ts read it): distributes them when not (once, under the migration lock, so processes
 * opening together convert them once), places the declared tables a later migration added to a distributed store,
 * and creates the routed append's function and the owner guard's (citus/owner-guard-function.ts).
 */
export async function openCitus(executor: Executor, t: Tables, sharded: boolean): Promise<void> {
  if (!sharded) {
    await executor.transaction(async (query) => {
      await migrationLock(query, t);
      await distribute(query, t);
    });
  } else if ((await unplacedTables(executor.query, t)).length > 0) {
    // A table a migration added to a store distributed before it (the key tables, a new per-session table) is placed
    // as declared. Looked at first, one catalog read, so an open takes no transaction once every table is.
    await executor.transaction(async (query) => {
      await migrationLock(query, t);
      await distribute(query, t);
    });
  }
  // The routed append's function (citus/append-function.ts) and the owner guard's, also for tables distributed by
  // a release without them. A transaction of its own: Citus refuses to distribute a function in one that sharded
  // tables in parallel.
  if (await hasFunctions(executor.query, t)) return;
  await executor.transaction(async (query) => {
    await migrationLock(query, t);
    if (!(await hasAppendFunction(query, t))) await createAppendFunction(query, t);
    if (!(await hasFunctions(query, t))) await createOwnerGuardFunction(query, t);
  });
}

// Whether both functions exist (one catalog read).
async function hasFunctions(query: Query, t: Tables): Promise<boolean> {
  const [row] = await query<{ present: boolean }>(
    "SELECT to_regprocedure($1) IS NOT NULL AND to_regprocedure($2) IS NOT NULL AS present",
    [ownerGuardSignature(t), appendSignature(t)],
  );
  return row?.present === true;
}
