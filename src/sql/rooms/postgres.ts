/**
 * Postgres's view of the storage rooms (list.ts, src/sql/room.ts): each room's Postgres part over a store's tables
 * (its names handed in), in the list's order, which the schema, the owner-data declaration (and so the purge and the
 * Citus placement), a session's delete and erasure and a key rotation iterate. It names no room.
 */
import type { Query } from "../engines/postgres/client.js";
import { qualified, type Tables } from "../engines/postgres/tables.js";
import { command, type Statement } from "../program.js";
import type { PostgresNames, PostgresRoom } from "../room.js";
import { ROOMS } from "./list.js";

/** The names a room's statements use over the store's tables `t`. */
function postgresNames(t: Tables): PostgresNames {
  return {
    table: (name) => qualified(t, name),
    index: (name) => `"${t.prefix}${name}"`,
  };
}

/** The rooms on Postgres, in the order their work runs. */
export const POSTGRES_ROOMS: readonly PostgresRoom[] = ROOMS.map(({ name, transferFields, postgres }) => {
  const { forgetSession, rekey } = postgres;
  return {
    name,
    transferFields,
    migrations: postgres.migrations.map(({ version, statements, run }) => ({
      version,
      statements: (t: Tables) => statements(postgresNames(t)),
      ...(run && { run: (query: Query, t: Tables) => run(query, postgresNames(t)) }),
    })),
    ownerData: postgres.ownerData,
    ...(forgetSession && {
      forgetSession: (t: Tables, sessionId: string) =>
        forgetSession(postgresNames(t)).map((sql) => command(sql, [sessionId])),
    }),
    ...(rekey && { rekey: (t: Tables) => rekey(postgresNames(t)) }),
  };
});

/** The statements deleting a session's rows of every room in `t`, one per table. */
export function forgetRoomRows(t: Tables, sessionId: string): Statement[] {
  return POSTGRES_ROOMS.flatMap((room) => room.forgetSession?.(t, sessionId) ?? []);
}
