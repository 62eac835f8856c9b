/**
 * The owner guard of a cluster's writes in clear that cannot carry it inside their statement (docs/PRIVACY.md,
 * "Refusals"; sql/engines/postgres/owner-guard.ts ownerGuardFunction): a function on the coordinator, not
 * distributed, so a call runs there in the caller's transaction. It takes the owner's advisory lock shared, which
 * the record of the owner's first key takes exclusive (sql/sealing/postgres-key-snapshot.ts), and only then reads the owner's
 * check and the session's owner: VOLATILE, each read takes a snapshot after the lock, so a key committed while the
 * call waited is seen, and one recorded after it waits for the write's commit. A check and the write in one
 * transaction, no window between them.
 */
import type { Query } from "../../sql/engines/postgres/client.js";
import { ownerHashSql } from "../../sql/engines/postgres/fts.js";
import { ownerGuardFunction, ownerLockSql } from "../../sql/engines/postgres/owner-guard.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";

/** The function's signature as `regprocedure` reads it. */
export const ownerGuardSignature = (t: Tables): string => `${ownerGuardFunction(t)}(text, text, text)`;

/** Creates the function (in the caller's transaction, under the migration lock). */
export async function createOwnerGuardFunction(query: Query, t: Tables): Promise<void> {
  await query(`CREATE OR REPLACE FUNCTION ${ownerGuardSignature(t)} RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  -- $1 the owner's hash (NULL: the session had no owner), $2 the check the write relied on (NULL: in clear),
  -- $3 the session whose owner must still be $1 (NULL: none to compare).
  IF $1 IS NOT NULL THEN PERFORM ${ownerLockSql("$1", true)}; END IF;
  IF $3 IS NOT NULL AND (SELECT ${ownerHashSql("s.owner")} FROM ${t.sessions} s WHERE s.id = $3)
    IS DISTINCT FROM $1 THEN RETURN false; END IF;
  RETURN (SELECT k.key_check FROM ${t.ownerKeys} k WHERE k.owner_hash = $1) IS NOT DISTINCT FROM $2;
END
$fn$`);
}
