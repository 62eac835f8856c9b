/**
 * The record of an owner's unfinished key rotation on Postgres (`agent_owner_rekeys`, schema step 19): the check of
 * the key its rows move from and how far `rekey` got, so a second run resumes where the first stopped
 * (sql/rekey/steps.ts). Its start is one statement; two runs of one rotation take turns on its row's lock.
 */
import { SessionError } from "../../errors.js";
import type { Query } from "../engines/postgres/client.js";
import { command, query } from "../program.js";
import type { Num } from "./table.js";

/** The key tables a rotation's record touches (schema.ts names them; not imported, which would be a cycle). */
interface RotationTables {
  ownerKeys: string;
  ownerRekeys: string;
}

/** An unfinished rotation: the key check it moves from and its cursor (`message_id` null: the session's start). */
export interface RotationRow {
  from_check: string;
  session_num: string;
  message_id: string | null;
}

function readSql(t: RotationTables, lock: boolean): string {
  return `SELECT from_check, session_num::text AS session_num, message_id FROM ${t.ownerRekeys} WHERE owner_hash = $1${lock ? " FOR UPDATE" : ""}`;
}

/** The rotation's statements of the rekey table (sql/rekey/table.ts). */
export function rotationStatements(t: RotationTables) {
  return {
    readRotation: (ownerHash: string) => query(readSql(t, false), [ownerHash]),
    lockRotation: (ownerHash: string) => query(readSql(t, true), [ownerHash]),
    keyCheck: (ownerHash: string) =>
      query(`SELECT key_check FROM ${t.ownerKeys} WHERE owner_hash = $1 FOR SHARE`, [ownerHash]),
    moveCursor: (ownerHash: string, num: Num, messageId: string | null) =>
      command(`UPDATE ${t.ownerRekeys} SET session_num = $2::bigint, message_id = $3 WHERE owner_hash = $1`, [
        ownerHash,
        String(num),
        messageId,
      ]),
    endRotation: (ownerHash: string) =>
      command(`DELETE FROM ${t.ownerRekeys} WHERE owner_hash = $1`, [ownerHash]),
    restartRotation: (ownerHash: string) =>
      command(
        `INSERT INTO ${t.ownerRekeys} (owner_hash, from_check)
         SELECT owner_hash, key_check FROM ${t.ownerKeys} WHERE owner_hash = $1 ON CONFLICT DO NOTHING`,
        [ownerHash],
      ),
  };
}

/** The owner's unfinished rotation, or undefined. */
export async function readRotation(
  query: Query,
  t: RotationTables,
  ownerHash: string,
): Promise<RotationRow | undefined> {
  const [row] = await query<RotationRow>(readSql(t, false), [ownerHash]);
  return row;
}

/**
 * Starts a rotation from the key checked `from` ($2) to the one checked `to` ($3) in one statement: the recorded
 * check becomes `to` if it is still `from` and no rotation is under way. The check is read under its row lock, so
 * of two processes starting at once the second sees the first's answer.
 */
function beginSql(t: RotationTables): string {
  return `WITH cur AS (SELECT key_check FROM ${t.ownerKeys} WHERE owner_hash = $1 FOR UPDATE),
    rot AS (SELECT 1 FROM ${t.ownerRekeys} WHERE owner_hash = $1),
    upd AS (
      UPDATE ${t.ownerKeys} SET key_check = $3 WHERE owner_hash = $1 AND key_check = $2
        AND NOT EXISTS (SELECT 1 FROM rot) RETURNING key_check
    ),
    ins AS (INSERT INTO ${t.ownerRekeys} (owner_hash, from_check) SELECT $1, $2 FROM upd RETURNING 1)
    SELECT (SELECT key_check FROM upd) AS began, (SELECT key_check FROM cur) AS recorded,
      EXISTS (SELECT 1 FROM rot) AS rotating, (SELECT count(*) FROM ins) AS started`;
}

/**
 * Starts a rotation (see {@link beginSql}) and answers the check recorded now: `to`, or another writer's.
 * `CONFLICT` while a rotation is under way.
 */
export async function beginRotation(
  query: Query,
  t: RotationTables,
  ownerHash: string,
  from: string,
  to: string,
): Promise<string> {
  const [row] = await query<{ began: string | null; recorded: string | null; rotating: boolean }>(
    beginSql(t),
    [ownerHash, from, to],
  );
  if (row?.began) return row.began;
  if (row?.recorded === from && row.rotating) {
    throw new SessionError("CONFLICT", "A key rotation of this owner is under way: finish it (rekey) first");
  }
  return row?.recorded ?? to;
}
