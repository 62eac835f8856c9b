/**
 * Postgres's storage rooms, the one list the engine takes them from (src/sql/room.ts): the schema, the owner-data
 * declaration (and so the purge and the Citus placement), a session's delete and erasure and a key rotation iterate
 * it. A new room is its folder and a line here (and in sqlite.ts); the order is the order its work runs in.
 */
import { checkpointsPostgresRoom } from "../checkpoints/postgres.js";
import type { Tables } from "../engines/postgres/tables.js";
import { graphStorePostgresRoom } from "../graph-store/postgres.js";
import type { Statement } from "../program.js";
import type { PostgresRoom } from "../room.js";

/** The rooms, in the order their work runs. */
export const POSTGRES_ROOMS: readonly PostgresRoom[] = [checkpointsPostgresRoom, graphStorePostgresRoom];

/** The statements deleting a session's rows of every room in `t`, one per table. */
export function forgetRoomRows(t: Tables, sessionId: string): Statement[] {
  return POSTGRES_ROOMS.flatMap((room) => room.forgetSession?.(t, sessionId) ?? []);
}
