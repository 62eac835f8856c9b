/**
 * The key guard of a sealed write on Postgres (sealing.ts KeyGuard): a store caches the key checks it read, so a
 * write's statement itself requires the check its content was sealed under to be still the owner's recorded one,
 * and a write refused by it is sealed again with the check read anew (a rotation another process started, or an
 * erasure), which refuses a process whose keyring answers the old key (`DECRYPT_FAILED`).
 */
import { SessionError } from "../errors.js";
import type { Query } from "./connection/client.js";
import type { Tables } from "./schema.js";
import { type StoredForm, storedForm } from "./stored-form.js";

/**
 * The guard's CTEs and condition in a store with a keyring (none without): `gd.keyed` is true for content in clear
 * (`$at` null) and while the check `$at + 1` is the owner's recorded one, whose row it locks (FOR SHARE) so that a
 * rotation starting meanwhile waits for this write, which its walk then sees.
 */
export function guardSql(t: Tables, at: number): { ctes: string; and: string } {
  if (!t.keys) return { ctes: "", and: "" };
  return {
    ctes: `gk AS (SELECT 1 FROM ${t.ownerKeys} WHERE owner_hash = $${at}::text AND key_check = $${at + 1}::text FOR SHARE),
  gd AS (SELECT $${at}::text IS NULL OR EXISTS (SELECT 1 FROM gk) AS keyed),
  `,
    and: " AND (SELECT keyed FROM gd)",
  };
}

/** The two parameters {@link guardSql} reads (none in a store without a keyring). */
export function guardParams(t: Tables, form: StoredForm): unknown[] {
  if (!t.keys) return [];
  return [form.guard?.ownerHash ?? null, form.guard?.check ?? null];
}

// A write refused by its guard more often than this means the owner's key keeps changing under it.
const MAX_RESEALS = 3;

/**
 * The form of a write its guard refused: the cached check is forgotten and the JSON sealed again with the
 * recorded one (`DECRYPT_FAILED` when this process's key is not it).
 */
export async function resealed(
  query: Query,
  t: Tables,
  sessionId: string,
  messageId: string,
  form: StoredForm,
  tries: number,
): Promise<StoredForm> {
  if (form.guard) t.keys?.stale(form.guard);
  if (tries >= MAX_RESEALS) {
    throw new SessionError(
      "CONFLICT",
      `The key of session "${sessionId}"'s owner kept changing while message "${messageId}" was written`,
    );
  }
  return storedForm(query, t, sessionId, messageId, form.json);
}
