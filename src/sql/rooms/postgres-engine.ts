/**
 * Postgres as a storage room's store sees it (src/sql/room-engine.ts), one implementation for every room: programs
 * run on the store's executor, `$n::type` placeholders (a value used twice keeps its number), the owner's key looked
 * up through the store's keys in the write's transaction, and the write's guard inside its statement (on a Citus
 * cluster the coordinator's owner guard function). The tables' keys and layout are read at each statement, since
 * the store sets them as it opens.
 */
import { SessionError } from "../../errors.js";
import { ownerWrite } from "../../store/crypto/write-guard.js";
import type { Executor } from "../engines/postgres/client.js";
import { ownerRowGuard, ownerRowGuardParams } from "../engines/postgres/owner-guard.js";
import { call, runInTransaction, runProgram } from "../engines/postgres/program.js";
import { qualified } from "../engines/postgres/tables.js";
import { numbered, type RoomEngine } from "../room-engine.js";
import type { KeyedTables } from "../sealing/postgres.js";
import { type RoomStores, roomStores } from "./list.js";

export type { RoomStores };

/** The rooms' engine over a Postgres store's connection and tables (its keys loaded per operation). */
export function postgresRoomEngine(ready: () => Promise<Executor>, t: KeyedTables): RoomEngine {
  return {
    kind: "postgres",
    table: (name) => qualified(t, name),
    params: numbered,
    // The row's guard refuses the write if the owner's key changed since this look-up.
    writeKey: (owner, where, fresh) =>
      call(async (q) => {
        if (!t.keys) return [{ write: ownerWrite(undefined, owner, where) }];
        const { value } = await t.keys.guarded(q, (k) => ownerWrite(k, owner, where), fresh);
        return [{ write: value }];
      }),
    ownerRowGuard: (p, write) => {
      // `WHERE true` as a parameter, so the guard's condition follows as ` AND …` (none without a keyring).
      const where = ` FROM w WHERE ${p.bind(true, "boolean")}`;
      const guard = ownerRowGuard(t, p.values.length + 1);
      p.values.push(...ownerRowGuardParams(t, write.guard));
      return { with: `WITH ${guard.ctes}w AS (SELECT 1)\n`, where: `${where}${guard.and}` };
    },
    run: async (program, transaction) => {
      const executor = await ready();
      return transaction ? runInTransaction(executor, program) : runProgram(executor.query, program());
    },
    withKeys: async (use) => {
      // Every store has keys (a keyless one's answer none): none is a store not made by PostgresStore.
      if (!t.keys) throw new SessionError("STORAGE", "This Postgres store has no keys");
      const executor = await ready();
      return t.keys.run(executor.query.bind(executor), use);
    },
  };
}

/** The rooms' stores (src/sql/rooms/list.ts) of a Postgres store, each under its room's property. */
export function postgresRoomStores(ready: () => Promise<Executor>, t: KeyedTables): RoomStores {
  return roomStores(postgresRoomEngine(ready, t));
}
