/**
 * The key guard of a sealed write on Postgres (sealing.ts KeyGuard): a store caches the key checks it read and the
 * sessions' owners, so a write's statement itself requires the check its content was sealed under to be still the
 * owner's recorded one and the session to be still that owner's, and a write refused by it is sealed again with
 * the owner and check read anew (a rotation another process started, an erasure, or the session deleted and created
 * again under its id for another owner), which refuses a process whose keyring answers the old key, or none for the
 * new owner (`DECRYPT_FAILED`). A write in clear of a session this process found in clear carries a guard too, on
 * one server (sealing.ts ClearGuard): the owner it found has no recorded check (none found: the session has no
 * owner), else nothing is written and the write looks the owner and its check up as a first write does: sealed, or
 * refused `DECRYPT_FAILED` without the owner's key.
 */
import { SessionError } from "../errors.js";
import type { Query } from "../sql/engines/postgres/client.js";
import type { OwnerGuard } from "../store/crypto/write-guard.js";
import type { KeyedTables } from "./sealing.js";
import { type StoredForm, storedForm } from "./stored-form.js";

/** How many parameters {@link guardSql} reads: none without a keyring, two on a cluster (no clear guard), else 3. */
export function guardCount(t: KeyedTables): number {
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
  t: KeyedTables,
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
  t: KeyedTables,
  at: number,
  session: string | null,
): { ctes: string; and: string } {
  return t.layout.guardsInside ? guardSql(t, at, session) : { ctes: "", and: "" };
}

/**
 * On a cluster, whether the guard of a write without it inside ({@link guardInside}) lets the write through: a
 * routed statement of its own, run in the write's transaction so that the locks it takes hold until the write
 * commits; true without a statement for a write that relies on no key check.
 */
export async function clusterGuardPasses(
  query: Query,
  t: KeyedTables,
  sessionId: string | null,
  form: Guarded,
): Promise<boolean> {
  if (!reliesOnGuard(t, form)) return true;
  const guard = guardParams(t, form);
  const { ctes } = guardSql(t, 2, "$1::text");
  const sql = `WITH ${ctes.trimEnd().replace(/,$/, "")} SELECT keyed FROM gd`;
  const [row] = await query<{ keyed: boolean }>(sql, [sessionId, ...guard]);
  return row?.keyed !== false;
}

/** Whether a write of `form` relies on a key check its guard compares (a cluster's write then needs a transaction). */
export const reliesOnGuard = (t: KeyedTables, form: Guarded): boolean =>
  guardParams(t, form).some((value) => value !== null);

// The owner's hash as store/crypto/owner-keys.ts ownerHash computes it (the first 32 hex digits of the SHA-256 of
// its UTF-8), in SQL; NULL for no owner.
const ownerHashSql = (column: string) => `left(encode(sha256(convert_to(${column}, 'UTF8')), 'hex'), 32)`;

/** What a guarded write relied on: a sealed one's key check, a clear one's owner found (stored-form.ts). */
export type Guarded = Pick<StoredForm, "guard" | "clear">;

/**
 * The {@link Guarded} form of a write's {@link OwnerGuard} (store/crypto/write-guard.ts): sealed under the check it
 * found, in clear for an owner it found without one, or nothing to guard (no owner).
 */
export function guardedOf(t: KeyedTables, guard: OwnerGuard): Guarded {
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
export function ownerGuardSql(t: KeyedTables, at: number): string {
  if (!t.keys || !t.layout.guardsInside) return "";
  return ` AND (SELECT key_check FROM ${t.ownerKeys} WHERE owner_hash = $${at}::text FOR SHARE)
    IS NOT DISTINCT FROM $${at + 1}::text`;
}

/** The parameters of {@link ownerGuardSql} (none where it is empty). */
export function ownerGuardParams(t: KeyedTables, guard: OwnerGuard | undefined): (string | null)[] {
  if (!t.keys || !t.layout.guardsInside) return [];
  return [guard?.ownerHash ?? null, guard?.check ?? null];
}

/** The parameters {@link guardSql} reads ({@link guardCount}). */
export function guardParams(t: KeyedTables, form: Guarded): unknown[] {
  if (!t.keys) return [];
  const sealed = [form.guard?.ownerHash ?? form.clear?.ownerHash ?? null, form.guard?.check ?? null];
  return t.layout.guardsInside ? [...sealed, form.clear !== undefined] : sealed;
}

// A write refused by its guard more often than this means the owner's key keeps changing under it.
const MAX_RESEALS = 3;

/**
 * Forgets what a write its guard refused relied on, `tries` refusals in: a sealed write's cached check and the
 * session's cached owner, a clear write's finding that the session was in clear (and its owner). `CONFLICT` past a
 * few tries; `what` names the write.
 */
export function refused(t: KeyedTables, sessionId: string, form: Guarded, tries: number, what: string): void {
  if (form.guard) t.keys?.stale(sessionId, form.guard);
  if (form.clear) t.keys?.unclear(sessionId);
  if (tries >= MAX_RESEALS) {
    throw new SessionError(
      "CONFLICT",
      `The key of session "${sessionId}"'s owner kept changing while ${what} was written`,
    );
  }
}

/**
 * The form of a write its guard refused ({@link refused}): the JSON sealed again with the recorded check
 * (`DECRYPT_FAILED` when this process's key is not it) of the owner read again; a write in clear looks its owner and
 * check up (its JSON, never offloaded, refused when sealed with a pointer look-alike, as stored-form.ts messageForm
 * does).
 */
export async function resealed(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  messageId: string,
  form: StoredForm,
  tries: number,
): Promise<StoredForm> {
  refused(t, sessionId, form, tries, `message "${messageId}"`);
  return storedForm(query, t, sessionId, messageId, form.json, form.clear !== undefined);
}

/**
 * The key a write of session `sessionId` seals with (null: in clear) and what its statement's guard relies on, as a
 * message's write finds them (stored-form.ts): an encrypted owner's check (cached: no statement), a session a write
 * of this process found in clear (no statement), else the owner and its check looked up (`DECRYPT_FAILED`, naming
 * `where`, for an owner with encrypted content whose key this store lacks). On a cluster a write in clear carries no
 * guard: its look-up reads the session's owner with the check (key-snapshot.ts readOwnerCheck).
 */
export async function guardedKey(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  where: string,
): Promise<Guarded & { key: Uint8Array | null }> {
  const keys = t.keys;
  if (!keys) return { key: null };
  const clear = t.layout.guardsInside ? keys.knownClear(sessionId) : undefined;
  if (clear) return { key: null, clear };
  const { value, guard } = await keys.guarded(query, (k) => {
    const key = k.keyFor(sessionId, true, where);
    return { key, owner: key ? null : k.ownerOf(sessionId) };
  });
  if (value.key) return { key: value.key, guard };
  return t.layout.guardsInside ? { key: null, clear: keys.noteClear(sessionId, value.owner) } : { key: null };
}
