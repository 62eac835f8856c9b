/**
 * The guard of a checkpoint write run as one statement (postgres-single.ts), on one server: the
 * same conditions as sealing/postgres-key-guard.ts writeGuardPasses's statement, as CTEs of the write itself (`gv`), so a warm write
 * is one round trip. A sealed write's guard locks the key check's row (FOR SHARE) inside the statement; a write in
 * clear of an owner first takes the owner's advisory lock shared in a statement before it, in one transaction with
 * it (a statement's snapshot is taken before it waits for a lock, so the lock cannot be inside it).
 */
import type { OwnerExpectation } from "../../contract/checkpoints.js";
import { SessionError } from "../../errors.js";
import { ownerHash } from "../../store/owner.js";
import type { Executor } from "../engines/postgres/client.js";
import { type Guarded, guardParams, guardSql, ownerLockSql } from "../engines/postgres/owner-guard.js";
import type { Row, Statement } from "../program.js";
import type { KeyedTables } from "../sealing/postgres.js";
import { checksOwner } from "../sealing/postgres-key-guard.js";
import type { StatementGuard } from "./steps.js";

/**
 * The guard CTEs of a one-statement write of `form` (its session `$1`): `gv.keyed` as writeGuardPasses's guard,
 * `gv.registered` (with `expect`) whether the session is registered to the expected owner, `gv.go` both.
 */
export function singleGuard(t: KeyedTables, form: Guarded, expect?: OwnerExpectation): StatementGuard {
  if (expect && !checksOwner(t)) throw new SessionError("UNSUPPORTED", "This store's writes check no owner");
  return (at) => {
    if (!t.keys)
      return { ctes: "gv AS (SELECT true AS go, true AS keyed, true AS registered),\n", params: [] };
    const { ctes } = guardSql(t, at, "$1::text");
    const params = guardParams(t, form);
    if (!expect)
      return { ctes: `${ctes}gv AS (SELECT keyed, true AS registered, keyed AS go FROM gd),\n`, params };
    // The owner the look-up found (its hash) is the expected one: known here, compared where the statement reads.
    const found = form.guard?.ownerHash ?? form.clear?.ownerHash ?? null;
    const matches = found === (expect.owner === null ? null : ownerHash(expect.owner));
    const registered = `(EXISTS (SELECT 1 FROM ${t.sessions} WHERE id = $1::text) AND $${at + params.length}::boolean)`;
    return {
      ctes: `${ctes}gv AS (SELECT keyed, ${registered} AS registered, keyed AND ${registered} AS go FROM gd),\n`,
      params: [...params, matches],
    };
  };
}

/**
 * Runs a one-statement write; its row, or undefined when the guard refused it (nothing written). An owner in
 * clear's advisory lock goes first, in one transaction with the write.
 */
export async function singlePasses(
  executor: Executor,
  form: Guarded,
  statement: Statement,
): Promise<Row | undefined> {
  const hash = form.clear?.ownerHash;
  const [row] = hash
    ? await executor.transaction(async (query) => {
        await query(`SELECT ${ownerLockSql("$1::text", true)}::text`, [hash]);
        return query<Row>(statement.sql, statement.params, statement.prepared);
      })
    : await executor.query<Row>(statement.sql, statement.params, statement.prepared);
  return row?.keyed === false ? undefined : row;
}
