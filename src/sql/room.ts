/**
 * A storage room's manifest: what a concern of `src/sql/<concern>/` declares so that the engines reach it without
 * naming it. Each engine takes its rooms from one list (`src/sql/rooms/sqlite.ts`, `src/sql/rooms/postgres.ts`): its
 * migrations join the schema, its tables the owner-data declaration (so the purge, docs/PRIVACY.md and the Citus
 * placement follow) with the export's fields of them, its statements a session's delete and erasure, and its passes a key
 * rotation. An engine's half lives in the concern's engine file, so a SQLite store loads no Postgres module.
 */
import type { OwnerDataTable } from "../store/owner-data.js";
import type { TransferField } from "../store/transfer/owner-fields.js";
import type { PostgresMigration } from "./engines/postgres/migration.js";
import type { Tables } from "./engines/postgres/tables.js";
import type { SqliteMigration } from "./engines/sqlite/migration.js";
import type { Program, Statement } from "./program.js";

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

/** A storage room on SQLite. */
export interface SqliteRoom {
  /** The room's name (its folder under src/sql/). */
  readonly name: string;
  /** Its schema steps, at the versions they were released with (a version is never claimed twice). */
  readonly migrations: readonly SqliteMigration[];
  /** Its tables as the owner-data declaration holds them. */
  ownerData(make: OwnerDataMakers): OwnerDataTable[];
  /** How the export carries each content and name column of its tables, or why it leaves it out. */
  readonly transferFields: Readonly<Record<string, TransferField>>;
  /** A session's rows deleted, each statement taking the session id (its delete and erasure run them). */
  readonly forgetSession?: readonly string[];
  /** Its part of a key rotation. */
  readonly rekey?: RoomRekey;
}

/** A storage room on Postgres (its tables named under the store's schema and prefix). */
export interface PostgresRoom {
  /** The room's name (its folder under src/sql/). */
  readonly name: string;
  /** Its schema steps, at the versions they were released with (a version is never claimed twice). */
  readonly migrations: readonly PostgresMigration[];
  /** Its tables as the owner-data declaration holds them, with their Citus placement. */
  ownerData(make: OwnerDataMakers): OwnerDataTable[];
  /** How the export carries each content and name column of its tables, or why it leaves it out. */
  readonly transferFields: Readonly<Record<string, TransferField>>;
  /** A session's rows deleted (its delete and erasure run them). */
  forgetSession?(t: Tables, sessionId: string): Statement[];
  /** Its part of a key rotation over the store's tables. */
  rekey?(t: Tables): RoomRekey;
}
