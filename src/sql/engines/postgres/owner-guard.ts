/**
 * Postgres's SQL of a write's key guard (sql/sealing/postgres-key-guard.ts; store/crypto/write-guard.ts OwnerGuard): in the
 * ground floor, beside the table names, since the statements of several concerns (streams, facts, the registry)
 * put it in their writes. What a refused write does next (sealed again, looked up) stays in sql/sealing/postgres-key-guard.ts.
 */
import type { OwnerGuard } from "../../../store/crypto/write-guard.js";
import type { Tables } from "./tables.js";

/** The table names with the store's keys when it has a keyring (sql/sealing/postgres.ts KeyedTables): only whether. */
export type GuardTables = Tables & { readonly keys?: object | undefined };

/** How many parameters {@link guardSql} reads: none without a keyring, else 3. */
export function guardCount(t: GuardTables): number {
  return t.keys ? 3 : 0;
}

// The advisory lock of an owner's key on a cluster (its class, then 32 bits of the owner's hash): a write in clear
// that cannot carry its guard inside its statement takes it shared ({@link ownerGuardFunction}), the record of an
// owner's first key takes it exclusive (sql/sealing/postgres-key-snapshot.ts), both on the coordinator.
const OWNER_LOCK_CLASS = 0x61676f6b;

/** The call of the advisory lock of the owner whose hash is the SQL expression `hash`, `shared` or exclusive. */
export const ownerLockSql = (hash: string, shared: boolean): string =>
  `pg_advisory_xact_lock${shared ? "_shared" : ""}(${OWNER_LOCK_CLASS}, ('x' || substr(${hash}, 1, 8))::bit(32)::integer)`;

/**
 * The name of a cluster's owner guard function (created by postgres/citus/owner-guard-function.ts): `(owner hash,
 * expected check, session)` takes the owner's lock shared on the coordinator, then answers whether the owner's
 * recorded check is still the expected one (none: in clear) and the session (null: none to compare) still that
 * owner's. VOLATILE: each of its reads takes a snapshot after the lock, so a first key committed while it waited is
 * seen.
 */
export function ownerGuardFunction(t: Tables): string {
  return `${t.schema ? `"${t.schema}".` : ""}"${t.prefix}agent_owner_guard_v1"`;
}

/**
 * The guard's CTEs and condition in a store with a keyring (none without): `gd.keyed` is true for content in clear
 * (`$at` null) and while the check `$at + 1` is the owner's recorded one, whose row it locks (FOR SHARE) so that a
 * rotation starting meanwhile waits for this write, which its walk then sees, and session `session` (an SQL
 * expression) still has the owner whose hash is `$at`. `$at + 2` true makes it a clear guard instead: the session
 * still has the owner whose hash is `$at` (null: none) and that owner no recorded check. The owner is
 * compared, not only its check: a session deleted and created again under its id for another owner must take the
 * first owner's writes neither in clear nor under the first owner's key (which the second owner cannot open). The
 * owner is one key lookup in the registry inside the write's statement (the statement reads that row for the
 * search vector's owner lexeme already), never a statement more. On a cluster the sealed guard is the same (a
 * sealed append runs this statement, routed by the session like the registry row it reads; citus/append-path.ts);
 * its clear guard is the coordinator's owner guard function ({@link ownerGuardFunction}), which holds the owner's
 * lock until the write commits (an append in clear takes the routed call instead, which checks the clear guard on
 * the session's worker, citus/append-function.ts).
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
  // In clear on a cluster: the coordinator's owner guard function, in this statement's transaction.
  const clear = t.layout.guardsInside
    ? `NOT EXISTS (SELECT 1 FROM ${t.ownerKeys} WHERE owner_hash = $${at}::text) AND ${owned}`
    : `${ownerGuardFunction(t)}($${at}::text, NULL, ${session ?? "NULL"})`;
  const keyed = `CASE WHEN $${at + 2}::boolean THEN ${clear} ELSE ${sealed} END`;
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
export function guardedOf(guard: OwnerGuard): Guarded {
  const { ownerHash, check } = guard;
  if (ownerHash === null) return {};
  if (check !== null) return { guard: { ownerHash, check } };
  return { clear: { ownerHash } };
}

/**
 * The condition of a write's {@link OwnerGuard} as one expression (its parameters `$at`, `$at + 1`:
 * {@link ownerGuardParams}): the owner's recorded check is still the one the look-up found (both none in clear; no
 * owner, none recorded: it holds). Empty without keys; on a cluster the coordinator's owner guard function
 * ({@link ownerGuardFunction}). See {@link guardSql} for a write that also compares a session's owner.
 */
export function ownerGuardSql(t: GuardTables, at: number): string {
  if (!t.keys) return "";
  // A cluster's write cannot lock the key table's row inside it: the coordinator's function (under the owner's lock).
  if (!t.layout.guardsInside)
    return ` AND (SELECT ${ownerGuardFunction(t)}($${at}::text, $${at + 1}::text, NULL))`;
  return ` AND (SELECT key_check FROM ${t.ownerKeys} WHERE owner_hash = $${at}::text FOR SHARE)
    IS NOT DISTINCT FROM $${at + 1}::text`;
}

/** The parameters of {@link ownerGuardSql} (none where it is empty). */
export function ownerGuardParams(t: GuardTables, guard: OwnerGuard | undefined): (string | null)[] {
  if (!t.keys) return [];
  return [guard?.ownerHash ?? null, guard?.check ?? null];
}

/** The parameters {@link guardSql} reads ({@link guardCount}). */
export function guardParams(t: GuardTables, form: Guarded): unknown[] {
  if (!t.keys) return [];
  return [
    form.guard?.ownerHash ?? form.clear?.ownerHash ?? null,
    form.guard?.check ?? null,
    form.clear !== undefined,
  ];
}

/**
 * The guard of a write of an owner's own row (a fact, a graph item; no session to compare): {@link guardSql} in its
 * statement on one server; on a cluster the coordinator's owner guard function under the owner's lock
 * ({@link ownerGuardSql}). Its parameters from `$at`: {@link ownerRowGuardParams}.
 */
export function ownerRowGuard(t: GuardTables, at: number): { ctes: string; and: string } {
  return t.layout.guardsInside ? guardSql(t, at, null) : { ctes: "", and: ownerGuardSql(t, at) };
}

/** The parameters {@link ownerRowGuard} reads. */
export function ownerRowGuardParams(t: GuardTables, guard: OwnerGuard): unknown[] {
  return t.layout.guardsInside ? guardParams(t, guardedOf(guard)) : ownerGuardParams(t, guard);
}
