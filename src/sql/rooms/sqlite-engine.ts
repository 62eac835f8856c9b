/**
 * SQLite as a storage room's store sees it (src/sql/room-engine.ts), one implementation for every room: programs run
 * on the store's connection, `?` placeholders bound in the statement's order, the owner's key read through the
 * connection in the write's transaction (which holds the write lock from its start, BEGIN IMMEDIATE).
 */
import { SessionError } from "../../errors.js";
import { ownerGuardParams, ownerWrite } from "../../store/crypto/write-guard.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { ownerGuardSqlite } from "../engines/sqlite/owner-guard.js";
import { call, runInTransaction, runProgram } from "../engines/sqlite/program.js";
import { positional, type RoomEngine } from "../room-engine.js";
import { type RoomStores, roomStores } from "./list.js";

export type { RoomStores };

/** The rooms' engine over a SQLite store's connection. */
export function sqliteRoomEngine(driver: SqlDriver): RoomEngine {
  return {
    kind: "sqlite",
    table: (name) => name,
    params: positional,
    writeKey: (owner, where) => call((d) => [{ write: ownerWrite(d.keys, owner, where) }]),
    ownerRowGuard: (p, write) => {
      p.values.push(...ownerGuardParams(write.guard));
      return { with: "", where: ` WHERE ${ownerGuardSqlite}` };
    },
    run: async (program, transaction) =>
      transaction ? runInTransaction(driver, program) : runProgram(driver, program()),
    withKeys: async (use) => {
      if (!driver.keys) throw new SessionError("STORAGE", "This SQLite connection has no keys");
      return use(driver.keys);
    },
  };
}

/** The rooms' stores (src/sql/rooms/list.ts) of a Sqlite store, each under its room's property. */
export function sqliteRoomStores(driver: SqlDriver): RoomStores {
  return roomStores(sqliteRoomEngine(driver));
}
