/**
 * A storage room's declaration: what a concern of `src/sql/<concern>/` declares in its `room.ts` so that the engines
 * reach it without naming it. One list (`src/sql/rooms/list.ts`) holds the rooms, in the order their work runs; each
 * engine's view of it (`src/sql/rooms/sqlite.ts`, `postgres.ts`) feeds the schema (its migrations), the owner-data
 * declaration (its tables, so the purge, docs/PRIVACY.md and the Citus placement follow) with the export's fields of
 * them, a session's delete and erasure (its statements) and a key rotation (its passes). A declaration holds both
 * engines' parts as plain data and statement builders, importing engine code only as types, so the list loads no
 * engine's runtime: a SQLite store loads no Postgres module. A room's store (`store`) is made over what an engine
 * hands every room (src/sql/room-engine.ts), so its statements are written once and neither engine names it; the
 * kinds its sealed columns are sealed as (`sealed`) are its own too (store/crypto/row-codec.ts `roomKind`).
 */
import type { RoomKind } from "../store/crypto/row-codec.js";
import type { OwnerDataTable } from "../store/owner-data.js";
import type { TransferField } from "../store/transfer/owner-fields.js";
import type { Query } from "./engines/postgres/client.js";
import type { PostgresMigration } from "./engines/postgres/migration.js";
import type { Tables } from "./engines/postgres/tables.js";
import type { SqliteMigration } from "./engines/sqlite/migration.js";
import type { Program, Statement } from "./program.js";
import type { RoomEngine } from "./room-engine.js";

/** How an engine's owner-data file makes a table of a session: name, holds, tie, sealed, erasure, columns, sealed columns. */
export type Plain = (
  table: string,
  holds: string,
  tie: OwnerDataTable["tie"],
  sealed: OwnerDataTable["sealed"],
  erasure: string,
  columns: OwnerDataTable["columns"],
  sealedAs?: OwnerDataTable["sealedAs"],
) => OwnerDataTable;

/** A started key rotation as its programs see it (sql/rekey/). */
export interface Rotation {
  owner: string;
  ownerHash: string;
  /** The owner's new key. */
  key: Uint8Array;
  /** Its id, which the first bytes of content sealed under it name. */
  id: string;
  /** The owner's rows in clear are sealed too (`sealClear`, sql/rekey/clear.ts). */
  sealClear: boolean;
}

/** A room's part of a key rotation, bound to its engine's statements (sql/rekey/finish.ts and clear.ts run it). */
export interface RoomRekey {
  /** Re-seals under the rotation's key the rows sealed under `previous` (`sessions`: the owner's session ids). */
  reseal(at: Rotation, previous: Uint8Array, sessions: readonly string[]): Program<void>;
  /** Seals under the rotation's key the owner's rows in clear (`sealClear`). */
  sealClear(at: Rotation, sessions: readonly string[]): Program<void>;
}

/** What the engine's owner-data file hands a room: its `plain` maker, and the erasure line of a session's table. */
export interface OwnerDataMakers {
  plain: Plain;
  withSession: string;
}

/**
 * How a room's Postgres statements name the store's tables and indexes (its schema and prefix applied, validated
 * plain identifiers): the engine hands them in, so a declaration needs no Postgres code.
 */
export interface PostgresNames {
  /** A table's quoted name, qualified by the store's schema. */
  table(name: string): string;
  /** An index's quoted name (an index lives in its table's schema). */
  index(name: string): string;
}

/** A room's part on SQLite. */
export interface SqliteRoomPart {
  /** Its schema steps, at the versions they were released with (a version is never claimed twice). */
  readonly migrations: readonly SqliteMigration[];
  /** Its tables as the owner-data declaration holds them. */
  ownerData(make: OwnerDataMakers): OwnerDataTable[];
  /** A session's rows deleted, each statement taking the session id (its delete and erasure run them). */
  readonly forgetSession?: readonly string[];
  /** Its part of a key rotation. */
  readonly rekey?: RoomRekey;
}

/** One of a room's schema steps on Postgres: its statements over the store's names, then `run` for what SQL alone cannot do. */
export interface PostgresRoomMigration {
  version: number;
  statements(n: PostgresNames): string[];
  run?(query: Query, n: PostgresNames): Promise<void>;
}

/** A room's part on Postgres, its statements built over the store's names. */
export interface PostgresRoomPart {
  /** Its schema steps, at the versions they were released with (a version is never claimed twice). */
  readonly migrations: readonly PostgresRoomMigration[];
  /** Its tables as the owner-data declaration holds them, with their Citus placement. */
  ownerData(make: OwnerDataMakers): OwnerDataTable[];
  /** A session's rows deleted, each statement taking the session id as `$1` (its delete and erasure run them). */
  forgetSession?(n: PostgresNames): string[];
  /** Its part of a key rotation over the store's tables. */
  rekey?(n: PostgresNames): RoomRekey;
}

/**
 * A room's store, one class for both engines: the property of an engine's store that holds it (`RoomStores` of
 * src/sql/rooms/list.ts), made over the engine's runner, whose statements the room writes once (src/sql/room-engine.ts).
 */
export interface RoomStore<K extends string = string, S = unknown> {
  readonly property: K;
  make(engine: RoomEngine): S;
}

/** A storage room: its name (its folder under src/sql/), the export's fields of its tables, each engine's part. */
export interface Room {
  readonly name: string;
  /** Its store, which each engine's store holds without naming the room. */
  readonly store?: RoomStore;
  /** The row codec's kinds its sealed columns are sealed as (their owner-data declarations name them). */
  readonly sealed?: readonly RoomKind<never>[];
  /** How the export carries each content and name column of its tables, or why it leaves it out. */
  readonly transferFields: Readonly<Record<string, TransferField>>;
  readonly sqlite: SqliteRoomPart;
  readonly postgres: PostgresRoomPart;
}

/** A room as SQLite takes it (src/sql/rooms/sqlite.ts). */
export type SqliteRoom = Pick<Room, "name" | "transferFields"> & SqliteRoomPart;

/** A room as Postgres takes it, its statements over a store's tables (src/sql/rooms/postgres.ts). */
export interface PostgresRoom extends Pick<Room, "name" | "transferFields"> {
  readonly migrations: readonly PostgresMigration[];
  ownerData(make: OwnerDataMakers): OwnerDataTable[];
  /** A session's rows deleted (its delete and erasure run them). */
  forgetSession?(t: Tables, sessionId: string): Statement[];
  /** Its part of a key rotation over the store's tables. */
  rekey?(t: Tables): RoomRekey;
}
