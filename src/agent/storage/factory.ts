import { SessionError } from "../../errors.js";
import type { SqliteSource } from "../../sql/engines/sqlite/open.js";
import type { SessionStorage } from "../types.js";
import { storageFactoryOptions } from "./factory-schema.js";
import { FileSessionStorage, type FileSessionStorageOptions } from "./file.js";
import { MemorySessionStorage } from "./memory.js";
import {
  PostgresSessionStorage,
  type PostgresSessionStorageOptions,
  type PostgresStorageSource,
} from "./postgres.js";
import { RedisSessionStorage, type RedisSessionStorageOptions } from "./redis.js";
import type { RedisSource } from "./redis-client.js";
import { SQLiteSessionStorage, type SQLiteSessionStorageOptions } from "./sqlite.js";

/** Options of each built-in storage type for {@link createSessionStorage}. */
export interface SessionStorageOptionsByType {
  memory: Record<string, never> | undefined;
  file: FileSessionStorageOptions & { dir: string };
  sqlite: SQLiteSessionStorageOptions & { database?: SqliteSource };
  postgres: PostgresSessionStorageOptions & { connection: PostgresStorageSource };
  redis: RedisSessionStorageOptions & { connection: RedisSource };
}

/** The built-in storage types. */
export type SessionStorageType = keyof SessionStorageOptionsByType;

let defaultStorage: SessionStorage | undefined;

/** Makes `storage` the one `createSession` uses when no `sessionStorage` is given. */
export function setDefaultStorage(storage: SessionStorage): void {
  if (!isSessionStorage(storage)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "setDefaultStorage needs an object with save, load, delete and list",
      { issues: [{ path: "storage", rule: "type" }] },
    );
  }
  defaultStorage = storage;
}

/** The default storage: the one set with {@link setDefaultStorage}, else a process-wide MemorySessionStorage. */
export function getDefaultStorage(): SessionStorage {
  defaultStorage ??= new MemorySessionStorage();
  return defaultStorage;
}

/** True when `value` has the four seed methods of a SessionStorage. */
export function isSessionStorage(value: unknown): value is SessionStorage {
  const storage = value as SessionStorage;
  return (
    typeof value === "object" &&
    value !== null &&
    typeof storage.save === "function" &&
    typeof storage.load === "function" &&
    typeof storage.delete === "function" &&
    typeof storage.list === "function"
  );
}

/**
 * Creates a built-in storage by name, e.g. `createSessionStorage("file", { dir: "./sessions" })` or
 * `createSessionStorage("sqlite", "./sessions.db")` (a string is what to open); unknown option names are refused.
 */
export function createSessionStorage<T extends SessionStorageType>(
  type: T,
  ...options: T extends "memory"
    ? [SessionStorageOptionsByType[T]?]
    : [SessionStorageOptionsByType[T] | string]
): SessionStorage {
  if (!Object.hasOwn(KINDS, type)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Unknown storage type ${JSON.stringify(type)}: use memory, file, sqlite, postgres or redis`,
      { issues: [{ path: "type", rule: "one_of" }] },
    );
  }
  const { main, rest } = storageFactoryOptions(type, options[0]);
  switch (type) {
    case "memory":
      return new MemorySessionStorage();
    case "file":
      return new FileSessionStorage(main as string, rest as FileSessionStorageOptions);
    case "sqlite":
      return new SQLiteSessionStorage(
        (main ?? ":memory:") as SqliteSource,
        rest as SQLiteSessionStorageOptions,
      );
    case "postgres":
      return new PostgresSessionStorage(main as PostgresStorageSource, rest as PostgresSessionStorageOptions);
    default:
      return new RedisSessionStorage(main as RedisSource, rest as RedisSessionStorageOptions);
  }
}

const KINDS: Record<SessionStorageType, true> = {
  memory: true,
  file: true,
  sqlite: true,
  postgres: true,
  redis: true,
};
