// The stores the eve door's cases run on: SQLite (both drivers), Postgres, PGlite and Citus, each with how many times
// a word is on its disk (SQLite: the file and its WAL; the Postgres family: pages of the schema's relations).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import pg from "pg";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { citusSchema, markersOnCluster } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, PG_URL, pgliteSwitchedOff, postgresUnavailable } from "../fixtures/postgres-db.js";
import { occurrences } from "../helpers/encryption.js";
import { markersInRelations, sqliteFiles, total } from "../helpers/purge.js";

export type Store = SqliteStore | PostgresStore;

/** One database a case writes to. */
export interface Target {
  open(keyring?: Keyring): Promise<Store>;
  onDisk(word: string): Promise<number>;
  end(): Promise<void>;
}

/** A backend: why it is skipped (null: it runs) and a fresh database of it. */
export interface Backend {
  name: string;
  skip(): Promise<string | null>;
  target(): Promise<Target>;
}

const unique = () => `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

function sqlite(driver: "better-sqlite3" | "node:sqlite"): Backend {
  return {
    name: `SQLite (${driver})`,
    skip: async () => null,
    target: async () => {
      const dir = mkdtempSync(join(tmpdir(), "eve-door-"));
      const path = join(dir, "memory.db");
      return {
        open: async (keyring) => new SqliteStore(path, { driver, ...(keyring ? { keyring } : {}) }),
        onDisk: async (word) => occurrences(sqliteFiles(path), word),
        end: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  };
}

const postgres: Backend = {
  name: "Postgres",
  skip: postgresUnavailable,
  target: async () => {
    const schema = `eve_door_${unique()}`;
    const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    return {
      open: async (keyring) => PostgresStore.open(pool, { schema, ...(keyring ? { keyring } : {}) }),
      onDisk: async (word) => total(await markersInRelations(pool, schema, word)),
      end: async () => {
        await dropSchema(pool, schema);
        await pool.end();
      },
    };
  },
};

const pglite: Backend = {
  name: "PGlite",
  skip: async () => pgliteSwitchedOff(),
  target: async () => {
    const db = await newPGlite({ extensions: { pageinspect } });
    return {
      open: async (keyring) =>
        PostgresStore.open(db, { schema: "eve_door", ...(keyring ? { keyring } : {}) }),
      onDisk: async (word) => total(await markersInRelations(db, "eve_door", word)),
      end: () => db.close(),
    };
  },
};

/** Citus: one distributed schema for the file (distributing costs seconds), emptied between cases. */
async function citus(): Promise<Backend> {
  let cluster: Awaited<ReturnType<typeof citusSchema>> | undefined;
  return {
    name: "Citus",
    skip: async () => {
      cluster ??= await citusSchema("eve");
      return cluster === null ? "no Citus cluster (see the line above)" : null;
    },
    target: async () => {
      const c = cluster;
      if (!c) throw new Error("Citus skipped");
      await c.reset();
      return {
        open: async (keyring) => c.store(keyring ? { keyring } : {}),
        onDisk: async (word) => total(await markersOnCluster(c.pool, c.schema, word)),
        end: async () => undefined,
      };
    },
  };
}

/** Every backend the door runs on. */
export async function backends(): Promise<Backend[]> {
  return [sqlite("better-sqlite3"), sqlite("node:sqlite"), postgres, pglite, await citus()];
}
