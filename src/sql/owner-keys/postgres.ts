import { ownerHash } from "../../store/owner.js";
import type { Executor } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";

/**
 * Whether the store has recorded the key of `owner`, or of any owner (one indexed read of the key checks): what
 * the tools ask before saying that a store opened without its keyring holds encrypted owners.
 */
export async function recordsOwnerKeys(
  executor: Executor,
  tables: Pick<Tables, "ownerKeys">,
  owner?: string,
): Promise<boolean> {
  const rows =
    owner === undefined
      ? await executor.query(`SELECT 1 FROM ${tables.ownerKeys} LIMIT 1`)
      : await executor.query(`SELECT 1 FROM ${tables.ownerKeys} WHERE owner_hash = $1`, [ownerHash(owner)]);
  return rows.length > 0;
}
