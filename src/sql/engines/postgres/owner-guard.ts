/**
 * Postgres's SQL of a write's key guard (postgres/key-guard.ts; store/crypto/write-guard.ts OwnerGuard): in the
 * ground floor, beside the table names, since the statements of several concerns (streams, facts, the registry)
 * put it in their writes. What a refused write does next (sealed again, looked up) stays in postgres/key-guard.ts.
 */
import type { OwnerGuard } from "../../../store/crypto/write-guard.js";
import type { Tables } from "./tables.js";

/** The table names with the store's keys when it has a keyring (postgres/sealing.ts KeyedTables): only whether. */
export type GuardTables = Tables & { readonly keys?: object | undefined };

/** How many parameters {@link guardSql} reads: none without a keyring, two on a cluster (no clear guard), else 3. */
export function guardCount(t: GuardTables): number {
  return t.keys ? (t.layout.guardsInside ? 3 : 2) : 0;
}

/**
 * The guard's CTEs and condition in a store with a keyring (none without): `gd.keyed` is true for content in clear
 * (`$at` null) and while the check `$at + 1` is the owner's recorded one, whose row it locks (FOR SHARE) so that a
 * rotation starting meanwhile waits for this write, which its walk then sees, and session `session` (an SQL
 * expression) still has the owner whose hash is `$at`. On one server `$at + 2` true makes it a clear guard instead:
 * the session still has the owner whose hash is `$at` (null: none) and that owner no recorded check. The owner is
 * compared, not only its check: a session deleted and created again under its id for another owner must take the
 * first owner's writes neither in clear nor under the first owner's key (which the second owner cannot open). The
 * owner is one key lookup in the registry inside the write's statement (the statement reads that row for the
 * search vector's owner lexeme already), never a statement more. On a cluster the sealed guard is the same (a
 * sealed append runs this statement, routed by the session like the registry row it reads; citus/append-path.ts);
 * a write in clear there takes the routed call, which carries no guard, after a look-up that reads the session's
 * owner with its check (key-snapshot.ts readOwnerCheck).
 */
export function guardSql(
  t: GuardTables,
  at: number,
  session: string | null = "$1::text",
): { ctes: string; and: string } {
  if (!t.keys) return { ctes: "", and: "" };
  // A write of an owner's own row (a fact of the owner, a block recorded for it or named by its key) names no
  // session to compare (null, or a session parameter that is null).
  const owned =
    session === null
      ? "true"
      : `(${session} IS NULL OR (SELECT ${ownerHashSql("owner")} FROM ${t.sessions} WHERE id = ${session})
        IS NOT DISTINCT FROM $${at}::text)`;
  const sealed = `$${at}::text IS NULL OR (EXISTS (SELECT 1 FROM gk) AND ${owned})`;
  const keyed = t.layout.guardsInside
    ? `CASE WHEN $${at + 2}::boolean
      THEN NOT EXISTS (SELECT 1 FROM ${t.ownerKeys} WHERE owner_hash = $${at}::text) AND ${owned}
      ELSE ${sealed} END`
    : sealed;
  return {
    ctes: `gk AS (SELECT 1 FROM ${t.ownerKeys} WHERE owner_hash = $${at}::text AND key_check = $${at + 1}::text FOR SHARE),
  gd AS (SELECT ${keyed} AS keyed),
  `,
    and: " AND (SELECT keyed FROM gd)",
  };
}

/**
 * The guard inside a write's statement ({@link guardSql}), none on a cluster for a row that is not on its
 * session's shard (a block, an entry, a stream's chunks): reading the session's registry row and the key table
 * there makes the write an INSERT … SELECT through the coordinator, and concurrent writers upgrading their lock on
 * the key table's shard deadlock. Such a write runs {@link clusterGuardPasses} before it, in its transaction.
 */
export function guardInside(
  t: GuardTables,
  at: number,
  session: string | null,
): { ctes: string; and: string } {
  return t.layout.guardsInside ? guardSql(t, at, session) : { ctes: "", and: "" };
}

// The owner's hash as store/crypto/owner-keys.ts ownerHash computes it (the first 32 hex digits of the SHA-256 of
// its UTF-8), in SQL; NULL for no owner.
const ownerHashSql = (column: string) => `left(encode(sha256(convert_to(${column}, 'UTF8')), 'hex'), 32)`;

/** What a guarded write relied on: a sealed one's key check, a clear one's owner found (stored-form.ts). */
export interface Guarded {
  guard?: { ownerHash: string; check: string } | undefined;
  clear?: { ownerHash: string | null } | undefined;
}

/**
 * The {@link Guarded} form of a write's {@link OwnerGuard} (store/crypto/write-guard.ts): sealed under the check it
 * found, in clear for an owner it found without one, or nothing to guard (no owner).
 */
export function guardedOf(t: GuardTables, guard: OwnerGuard): Guarded {
  const { ownerHash, check } = guard;
  if (ownerHash === null) return {};
  if (check !== null) return { guard: { ownerHash, check } };
  // A cluster's writes in clear carry no guard (guardSql).
  return t.layout.guardsInside ? { clear: { ownerHash } } : {};
}

/**
 * The condition of a write's {@link OwnerGuard} as one expression (its parameters `$at`, `$at + 1`:
 * {@link ownerGuardParams}): the owner's recorded check is still the one the look-up found (both none in clear; no
 * owner, none recorded: it holds). Empty without keys and on a cluster (where a write in clear carries no guard
 * but an append's): see {@link guardSql} for a write that also compares a session's owner.
 */
export function ownerGuardSql(t: GuardTables, at: number): string {
  if (!t.keys || !t.layout.guardsInside) return "";
  return ` AND (SELECT key_check FROM ${t.ownerKeys} WHERE owner_hash = $${at}::text FOR SHARE)
    IS NOT DISTINCT FROM $${at + 1}::text`;
}

/** The parameters of {@link ownerGuardSql} (none where it is empty). */
export function ownerGuardParams(t: GuardTables, guard: OwnerGuard | undefined): (string | null)[] {
  if (!t.keys || !t.layout.guardsInside) return [];
  return [guard?.ownerHash ?? null, guard?.check ?? null];
}

/** The parameters {@link guardSql} reads ({@link guardCount}). */
export function guardParams(t: GuardTables, form: Guarded): unknown[] {
  if (!t.keys) return [];
  const sealed = [form.guard?.ownerHash ?? form.clear?.ownerHash ?? null, form.guard?.check ?? null];
  return t.layout.guardsInside ? [...sealed, form.clear !== undefined] : sealed;
}
