/**
 * The key guard of a sealed write on Postgres (postgres.ts KeyGuard): a store caches the key checks it read and the
 * sessions' owners, so a write's statement itself requires the check its content was sealed under to be still the
 * owner's recorded one and the session to be still that owner's, and a write refused by it is sealed again with
 * the owner and check read anew (a rotation another process started, an erasure, or the session deleted and created
 * again under its id for another owner), which refuses a process whose keyring answers the old key, or none for the
 * new owner (`DECRYPT_FAILED`). A write in clear of a session this process found in clear carries a guard too, on
 * one server (postgres.ts ClearGuard): the owner it found has no recorded check (none found: the session has no
 * owner), else nothing is written and the write looks the owner and its check up as a first write does: sealed, or
 * refused `DECRYPT_FAILED` without the owner's key.
 */
import type { OwnerExpectation } from "../../contract/checkpoints.js";
import { SessionError } from "../../errors.js";
import { ownerHash } from "../../store/owner.js";
import type { Query } from "../engines/postgres/client.js";
import {
  type Guarded,
  guardParams,
  guardSql,
  ownerGuardFunction,
  ownerLockSql,
} from "../engines/postgres/owner-guard.js";
import type { KeyedTables } from "./postgres.js";
import { type StoredForm, storedForm } from "./postgres-stored-form.js";

/**
 * On a cluster, whether the guard of a write without it inside ({@link guardInside}) lets the write through: a
 * statement of its own, run in the write's transaction so that the locks it takes hold until the write commits (a
 * write in clear: the coordinator's owner guard function, which holds the owner's lock shared against a first key
 * recorded meanwhile); true without a statement for a write that relies on nothing (no keyring).
 */
export async function clusterGuardPasses(
  query: Query,
  t: KeyedTables,
  sessionId: string | null,
  form: Guarded,
): Promise<boolean> {
  if (!reliesOnGuard(t, form)) return true;
  if (form.clear) {
    const sql = `SELECT ${ownerGuardFunction(t)}($1::text, NULL, $2::text) AS keyed`;
    const [row] = await query<{ keyed: boolean }>(sql, [form.clear.ownerHash, sessionId]);
    return row?.keyed !== false;
  }
  const guard = guardParams(t, form);
  const { ctes } = guardSql(t, 2, "$1::text");
  const sql = `WITH ${ctes.trimEnd().replace(/,$/, "")} SELECT keyed FROM gd`;
  const [row] = await query<{ keyed: boolean }>(sql, [sessionId, ...guard]);
  return row?.keyed !== false;
}

/**
 * Whether the guard of a write of several statements lets it through, on any layout: a statement of its own at the
 * start of the write's transaction (no statement of the write carries it). On a cluster {@link clusterGuardPasses}.
 * On one server a write in clear first takes the owner's advisory lock shared for the rest of the transaction (the
 * record of an owner's first key takes it exclusive, postgres-key-snapshot.ts), so the guard's read after it sees a first key
 * committed meanwhile and one recorded later waits for the write's commit; a sealed write's guard locks the key
 * check's row (FOR SHARE), which a rotation or erasure waits for. `expect` (one server only: {@link checksOwner}):
 * the same statement also reads whether the session is registered, and a guard that passed compared the
 * registry's owner with the one the look-up found, so the write is `CONFLICT` unless that is the expected one.
 */
export async function writeGuardPasses(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  form: Guarded,
  expect?: OwnerExpectation,
): Promise<boolean> {
  if (expect && !checksOwner(t)) throw new SessionError("UNSUPPORTED", "This store's writes check no owner");
  if (!t.layout.guardsInside) return clusterGuardPasses(query, t, sessionId, form);
  // With keys a look-up always finds a check or an owner in clear: an expectation is never left unchecked here.
  if (!reliesOnGuard(t, form)) return true;
  const hash = form.clear?.ownerHash;
  if (hash) await query(`SELECT ${ownerLockSql("$1::text", true)}::text`, [hash]);
  const { ctes } = guardSql(t, 2, "$1::text");
  const registered = expect ? `, EXISTS (SELECT 1 FROM ${t.sessions} WHERE id = $1::text) AS registered` : "";
  const sql = `WITH ${ctes.trimEnd().replace(/,$/, "")} SELECT keyed${registered} FROM gd`;
  const [row] = await query<{ keyed: boolean; registered?: boolean }>(sql, [
    sessionId,
    ...guardParams(t, form),
  ]);
  if (row?.keyed === false) return false;
  if (expect) {
    const found = form.guard?.ownerHash ?? form.clear?.ownerHash ?? null;
    if (row?.registered !== true || found !== (expect.owner === null ? null : ownerHash(expect.owner))) {
      throw new SessionError(
        "CONFLICT",
        `Session "${sessionId}" is not registered to the owner the write expects`,
      );
    }
  }
  return true;
}

/**
 * Whether {@link writeGuardPasses} can check an owner expectation in its guard statement: on one server with keys,
 * where every write carries that statement (a look-up always finds a check or an owner in clear).
 */
export const checksOwner = (t: KeyedTables): boolean => t.layout.guardsInside && t.keys !== undefined;

/**
 * Whether a write of `form` relies on what its look-up found (a key check, or an owner in clear): a cluster's
 * write then needs a transaction.
 */
export const reliesOnGuard = (t: KeyedTables, form: Guarded): boolean =>
  t.keys !== undefined && (form.guard !== undefined || form.clear !== undefined);

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
 * check up (its JSON, never offloaded, refused when sealed with a pointer look-alike, as postgres-stored-form.ts messageForm
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
 * message's write finds them (postgres-stored-form.ts): an encrypted owner's check (cached: no statement), a session a write
 * of this process found in clear (no statement), else the owner and its check looked up (`DECRYPT_FAILED`, naming
 * `where`, for an owner with encrypted content whose key this store lacks). On a cluster a write in clear carries no
 * guard: its look-up reads the session's owner with the check (postgres-key-snapshot.ts readOwnerCheck).
 */
export async function guardedKey(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  where: string,
): Promise<Guarded & { key: Uint8Array | null }> {
  const keys = t.keys;
  if (!keys) return { key: null };
  const clear = keys.knownClear(sessionId);
  if (clear) return { key: null, clear };
  const { value, guard } = await keys.guarded(query, (k) => {
    const key = k.keyFor(sessionId, true, where);
    return { key, owner: key ? null : k.ownerOf(sessionId) };
  });
  if (value.key) return { key: value.key, guard };
  return { key: null, clear: keys.noteClear(sessionId, value.owner) };
}
