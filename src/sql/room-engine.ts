/**
 * What an engine hands a storage room's store (src/sql/room.ts `RoomStore`): its runner, its keys, its tables' names,
 * its parameters' placeholders and the owner's write key and guard. A room's statements are written once over it,
 * the engine's part of their text being small data in the room's statements file; the engines implement it once for
 * every room (src/sql/rooms/sqlite-engine.ts, postgres-engine.ts), so a new room adds no line to an engine. The two
 * placeholder styles are here, engine-free, so a room's declaration (its key rotation's statements) binds with them.
 */
import type { ContentKeys } from "../store/crypto/content-keys.js";
import type { OwnerWrite } from "../store/crypto/write-guard.js";
import type { Program, Step } from "./program.js";

/** A statement's parameters as they are bound, in the engine's placeholder style. */
export interface Params {
  /** The values bound so far, in the order the statement reads them. */
  readonly values: unknown[];
  /** Binds `value`: its placeholder, cast to `type` on Postgres (`?` on SQLite, which takes no cast). */
  bind(value: unknown, type?: string): string;
  /** `mark`, bound before to `value`, once more: Postgres reuses its number, SQLite binds the value anew. */
  again(mark: string, value: unknown): string;
}

/** The guard of a write of an owner's own row around an `INSERT … SELECT <values>`: before it, after the values. */
export interface RowGuard {
  /** The text before `INSERT` (Postgres's common table expressions; empty on SQLite). */
  readonly with: string;
  /** The text after the selected values: the condition that the owner's key is still the one looked up. */
  readonly where: string;
}

/** An engine as a room's store sees it. */
export interface RoomEngine {
  readonly kind: "sqlite" | "postgres";
  /** A table's name as statements write it (on Postgres quoted and qualified by the store's schema and prefix). */
  table(name: string): string;
  /** A new statement's parameters. */
  params(): Params;
  /** The owner's write key and guard (store/crypto/write-guard.ts), read in the write's transaction: rows `write`. */
  writeKey(owner: string, where: string, fresh: boolean): Step;
  /** The guard of an owner's own row written under `write`, its parameters bound to `p` after the row's values. */
  ownerRowGuard(p: Params, write: OwnerWrite): RowGuard;
  /** Runs a program, in one write transaction when `transaction`. */
  run<T>(program: () => Program<T>, transaction: boolean): Promise<T>;
  /** Runs `use` with the store's keys (undefined: none), to open sealed values. */
  withKeys<T>(use: (keys: ContentKeys | undefined) => T): Promise<T>;
}

/** SQLite's positional parameters: each placeholder `?`, each use of a value bound again. */
export function positional(): Params {
  const values: unknown[] = [];
  const bind = (value: unknown) => {
    values.push(value);
    return "?";
  };
  return { values, bind, again: (_mark, value) => bind(value) };
}

/** Postgres's numbered parameters, `$n` cast to the type given. */
export function numbered(): Params {
  const values: unknown[] = [];
  return {
    values,
    bind: (value, type) => {
      values.push(value);
      return `$${values.length}${type ? `::${type}` : ""}`;
    },
    again: (mark) => mark,
  };
}
