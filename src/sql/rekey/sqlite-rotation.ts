/**
 * The record of an owner's unfinished key rotation on SQLite (`agent_owner_rekeys`): the check of the key its rows
 * move from and how far `rekey` got, so a second run resumes where the first stopped (sql/rekey/steps.ts). Its
 * start reads and writes in one write transaction, which no other writer can interleave.
 */
import { SessionError } from "../../errors.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { command, query } from "../program.js";
import type { Num } from "./table.js";

/** The table a rotation is recorded in (schema.ts step 20). */
export const REKEY_TABLES = [
  // Beside the owner's row in agent_owner_keys (whose key_check is then the new key's). The cursor is the last
  // session (head num) and message id re-sealed: rows are walked by (session_num, id), the messages' unique index.
  `CREATE TABLE IF NOT EXISTS agent_owner_rekeys (
    owner_hash TEXT PRIMARY KEY,
    from_check TEXT NOT NULL,
    session_num INTEGER NOT NULL DEFAULT 0,
    message_id TEXT
  ) WITHOUT ROWID`,
];

/** An unfinished rotation: the key check it moves from and its cursor (`message_id` null: the session's start). */
export interface RotationRow {
  from_check: string;
  session_num: number;
  message_id: string | null;
}

const READ = "SELECT from_check, session_num, message_id FROM agent_owner_rekeys WHERE owner_hash = ?";

/** The rotation's statements of the rekey table (sql/rekey/table.ts). */
export const ROTATION = {
  readRotation: (ownerHash: string) => query(READ, [ownerHash]),
  // A write transaction excludes another run's batch: nothing to lock.
  lockRotation: () => null,
  moveCursor: (ownerHash: string, num: Num, messageId: string | null) =>
    command("UPDATE agent_owner_rekeys SET session_num = ?, message_id = ? WHERE owner_hash = ?", [
      Number(num),
      messageId,
      ownerHash,
    ]),
  endRotation: (ownerHash: string) =>
    command("DELETE FROM agent_owner_rekeys WHERE owner_hash = ?", [ownerHash]),
  restartRotation: (ownerHash: string) =>
    command(
      "INSERT INTO agent_owner_rekeys (owner_hash, from_check) SELECT owner_hash, key_check FROM agent_owner_keys WHERE owner_hash = ?",
      [ownerHash],
    ),
};

/** The owner's unfinished rotation, or undefined. */
export function readRotation(driver: SqlDriver, ownerHash: string): RotationRow | undefined {
  return driver.get<RotationRow>(READ, [ownerHash]);
}

/**
 * Starts a rotation from the key checked `from` to the one checked `to`, in one transaction; answers the check
 * recorded now (another writer may have started the same rotation, or another, first). `CONFLICT` while a
 * rotation is under way.
 */
export function beginRotation(driver: SqlDriver, ownerHash: string, from: string, to: string): string {
  return driver.transaction(() => {
    const recorded = driver.get<{ key_check: string }>(
      "SELECT key_check FROM agent_owner_keys WHERE owner_hash = ?",
      [ownerHash],
    )?.key_check;
    if (recorded !== from) return recorded ?? to;
    if (readRotation(driver, ownerHash)) {
      throw new SessionError(
        "CONFLICT",
        "A key rotation of this owner is under way: finish it (rekey) first",
      );
    }
    driver.run("UPDATE agent_owner_keys SET key_check = ? WHERE owner_hash = ?", [to, ownerHash]);
    driver.run("INSERT INTO agent_owner_rekeys (owner_hash, from_check) VALUES (?, ?)", [ownerHash, from]);
    return to;
  });
}
