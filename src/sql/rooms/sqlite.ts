/**
 * SQLite's view of the storage rooms (list.ts, src/sql/room.ts): each room's SQLite part, in the list's order, which
 * the schema, the owner-data declaration, a session's delete and erasure and a key rotation iterate. It names no room.
 */
import type { SqlDriver } from "../engines/sqlite/driver.js";
import type { SqliteRoom } from "../room.js";
import { ROOMS } from "./list.js";

/** The rooms on SQLite, in the order their work runs. */
export const SQLITE_ROOMS: readonly SqliteRoom[] = ROOMS.map(({ name, transferFields, sqlite }) => ({
  name,
  transferFields,
  ...sqlite,
}));

/** The statements deleting a session's rows of every room, each taking the session id. */
export const FORGET_SESSION_ROWS: readonly string[] = SQLITE_ROOMS.flatMap(
  (room) => room.forgetSession ?? [],
);

/** Deletes a session's rows of every room, in the caller's transaction (a session deleted or erased). */
export function forgetRoomRows(driver: SqlDriver, sessionId: string): void {
  for (const sql of FORGET_SESSION_ROWS) driver.run(sql, [sessionId]);
}
