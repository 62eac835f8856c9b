/**
 * The storage rooms, the one list the engines take them from (src/sql/room.ts): each engine's view of it (sqlite.ts,
 * postgres.ts here) feeds the schema, the owner-data declaration (and so the purge and the Citus placement), a
 * session's delete and erasure and a key rotation. A new room is its folder and a line here; the order is the order
 * its work runs in. Only rooms' declarations (`room.ts`) are imported, which import engine code only as types, so the
 * list loads no engine (test/structure/rooms.test.ts holds both).
 */
import { checkpointsRoom } from "../checkpoints/room.js";
import { graphStoreRoom } from "../graph-store/room.js";
import type { Room } from "../room.js";

/** The rooms, in the order their work runs. */
export const ROOMS: readonly Room[] = [checkpointsRoom, graphStoreRoom];
