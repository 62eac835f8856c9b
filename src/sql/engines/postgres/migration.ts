/**
 * One step of Postgres's schema (src/postgres/schema.ts lists them; a storage room brings its own, src/sql/room.ts):
 * on the ground so that a room declares its steps without importing the store's top floor.
 */
import type { Query } from "./client.js";
import type { Tables } from "./tables.js";

/**
 * One schema step: its version, its statements, then `run` for what SQL alone cannot do (the search vectors are
 * made in JavaScript). Released steps are never edited; a change is a new step.
 */
export interface PostgresMigration {
  version: number;
  statements: (t: Tables) => string[];
  run?: (query: Query, t: Tables) => Promise<void>;
}
