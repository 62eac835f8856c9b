import { ownerHash } from "../../store/owner.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

/**
 * Whether the store has recorded the key of `owner`, or of any owner (one indexed read of the key checks): what
 * the tools ask before saying that a store opened without its keyring holds encrypted owners.
 */
export function recordsOwnerKeys(driver: SqlDriver, owner?: string): boolean {
  return owner === undefined
    ? driver.get("SELECT 1 AS found FROM agent_owner_keys LIMIT 1") !== undefined
    : driver.get("SELECT 1 AS found FROM agent_owner_keys WHERE owner_hash = ?", [ownerHash(owner)]) !==
        undefined;
}
