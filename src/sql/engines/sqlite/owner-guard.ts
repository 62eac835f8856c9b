/**
 * SQLite's condition of a sealed write's owner guard (store/crypto/write-guard.ts OwnerGuard): in the ground floor,
 * beside the driver, since the statements of several concerns (facts, the registry) put it in their inserts.
 */

/**
 * The owner's recorded check is still the one the write's look-up found (both none for a write in clear; no owner:
 * no row, so it holds). Parameters: write-guard.ts ownerGuardParams (the owner's hash, the check).
 */
export const ownerGuardSqlite = "(SELECT key_check FROM agent_owner_keys WHERE owner_hash = ?) IS ?";
