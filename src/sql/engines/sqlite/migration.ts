/**
 * One step of SQLite's schema (src/sqlite/schema.ts lists them; a storage room brings its own, src/sql/room.ts): on
 * the ground so that a room declares its steps without importing the store's top floor.
 */
import type { SqlDriver } from "./driver.js";

/**
 * One schema step: its version and the statements (one per entry, so a `sql` tag can run them), then `run` for
 * what SQL alone cannot do (the index's text is made in JavaScript).
 */
export interface SqliteMigration {
  version: number;
  statements: string[];
  run?: (driver: SqlDriver) => void;
}
