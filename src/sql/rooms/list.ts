/**
 * The storage rooms, the one list the engines take them from (src/sql/room.ts): each engine's view of it (sqlite.ts,
 * postgres.ts here) feeds the schema, the owner-data declaration (and so the purge and the Citus placement), a
 * session's delete and erasure and a key rotation; and each engine's store holds the rooms' stores (`roomStores`)
 * under their properties (`RoomStores`). A new room is its folder and a line here; the order is the order its work
 * runs in. Only rooms' declarations (`room.ts`) are imported, which import engine code only as types, so the
 * list loads no engine (test/structure/rooms.test.ts holds both).
 */
import { checkpointsRoom } from "../checkpoints/room.js";
import { graphStoreRoom } from "../graph-store/room.js";
import type { Room } from "../room.js";
import type { RoomEngine } from "../room-engine.js";

// The rooms with their own types, which the types of their stores are read from.
const LISTED = [checkpointsRoom, graphStoreRoom] as const satisfies readonly Room[];

/** The rooms, in the order their work runs. */
export const ROOMS: readonly Room[] = LISTED;

type Listed = (typeof LISTED)[number];

/** The rooms' stores as an engine's store holds them: each under its room's property. */
export type RoomStores = {
  readonly [R in Listed as R extends { store: { property: infer P extends string } } ? P : never]: R extends {
    store: { make(engine: RoomEngine): infer S };
  }
    ? S
    : never;
};

/** Every listed room's store over engine `engine`, under its property. */
export function roomStores(engine: RoomEngine): RoomStores {
  return Object.fromEntries(
    ROOMS.flatMap((room) => (room.store ? [[room.store.property, room.store.make(engine)]] : [])),
  ) as RoomStores;
}
