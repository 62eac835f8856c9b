/**
 * SQLite's storage rooms, the one list the engine takes them from (src/sql/room.ts): the schema, the owner-data
 * declaration, a session's delete and erasure and a key rotation iterate it. A new room is its folder and a line here
 * (and in postgres.ts); the order is the order its work runs in.
 */
import { checkpointsSqliteRoom } from "../checkpoints/sqlite.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { graphStoreSqliteRoom } from "../graph-store/sqlite.js";
import type { SqliteRoom } from "../room.js";

/** The rooms, in the order their work runs. */
export const SQLITE_ROOMS: readonly SqliteRoom[] = [checkpointsSqliteRoom, graphStoreSqliteRoom];

/** The statements deleting a session's rows of every room, each taking the session id. */
export const FORGET_SESSION_ROWS: readonly string[] = SQLITE_ROOMS.flatMap(
  (room) => room.forgetSession ?? [],
);

/** Deletes a session's rows of every room, in the caller's transaction (a session deleted or erased). */
export function forgetRoomRows(driver: SqlDriver, sessionId: string): void {
  for (const sql of FORGET_SESSION_ROWS) driver.run(sql, [sessionId]);
}
