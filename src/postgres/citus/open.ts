import { SessionError } from "../../errors.js";
import type { Executor } from "../connection/client.js";
import { migrationLock, type Tables } from "../schema.js";
import { distribute, isDistributed, referenceKeyTables } from "./layout.js";

/**
 * Matches the tables' layout to the store's `distributed` option on open: distributes them when asked (once,
 * under the migration lock, so processes opening together convert them once), and refuses to run the
 * single-node statements on distributed tables, which Citus would fan out to every shard or reject.
 */
export async function checkLayout(executor: Executor, t: Tables): Promise<void> {
  const distributed = await isDistributed(executor.query, t);
  if (distributed && t.distributed) {
    // A store with a keyring needs its key tables on every node (a store distributed before they existed).
    if (t.keys) {
      await executor.transaction(async (query) => {
        await migrationLock(query, t);
        await referenceKeyTables(query, t);
      });
    }
    return;
  }
  if (distributed === t.distributed) return;
  if (distributed) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "These agent-session tables are distributed by Citus: open the store with distributed: true",
      { issues: [{ path: "distributed", rule: "conflict" }] },
    );
  }
  await executor.transaction(async (query) => {
    await migrationLock(query, t);
    await distribute(query, t);
  });
}
