// The stores the Mastra door runs on: SQLite (both drivers), PGlite, Postgres and a Citus cluster, each case a fresh
// store; and the Node version Mastra needs (>= 22.13), below which the files skip with the reason printed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { citusSchema, markersOnCluster } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { occurrences } from "../helpers/encryption.js";
import { markersInRelations, sqliteFiles, total } from "../helpers/purge.js";

/** Why Mastra cannot run on this Node (null: it can). */
export function nodeTooOld(): string | null {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 13)
    ? null
    : `Mastra needs Node >= 22.13 (this is ${process.versions.node}); CI runs these files on Node 24`;
}

/** An opened store and how to close it; `files`: the SQLite files, for a scan of the disk. */
export interface Opened {
  store: SqliteStore | PostgresStore;
  close(): Promise<void>;
  /** How many places on disk hold `marker` (SQLite's files; Postgres's pages, dead tuples included); absent: not scanned. */
  scan?: (marker: string) => Promise<number>;
}

/** A backend the Mastra files run on. */
export interface Backend {
  name: string;
  skip?: () => Promise<string | null>;
  open(options?: { keyring?: Keyring }): Promise<Opened>;
}

const dir = mkdtempSync(join(tmpdir(), "mastra-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const sqlite = (driver: "better-sqlite3" | "node:sqlite"): Backend => ({
  name: `SQLite (${driver})`,
  open: async (options = {}) => {
    const path = join(dir, `${Math.random().toString(36).slice(2)}.db`);
    const store = new SqliteStore(path, { driver, ...options });
    const scan = async (marker: string) => {
      store.driver.run("PRAGMA wal_checkpoint(TRUNCATE)");
      return occurrences(sqliteFiles(path), marker);
    };
    return { store, close: () => store.close(), scan };
  },
});

/** The backends, Citus distributed once for the file (awaited before any test is registered). */
export async function backends(name: string): Promise<Backend[]> {
  const list: Backend[] = [
    sqlite("better-sqlite3"),
    sqlite("node:sqlite"),
    {
      name: "PGlite",
      skip: async () => pgliteSwitchedOff(),
      open: async (options = {}) => {
        const db = await newPGlite({ extensions: { pageinspect } });
        const store = await PostgresStore.open(db, { schema: "mastra", ...options });
        return {
          store,
          scan: async (marker) => total(await markersInRelations(db, "mastra", marker)),
          close: async () => {
            await store.close();
            await db.close();
          },
        };
      },
    },
    {
      name: "Postgres",
      skip: postgresUnavailable,
      open: async (options = {}) => {
        const pool = testPool(4);
        const schema = `mastra_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
        const store = await PostgresStore.open(pool, { schema, ...options });
        return {
          store,
          scan: async (marker) => total(await markersInRelations(pool, schema, marker)),
          close: async () => {
            await store.close();
            await dropSchema(pool, schema);
            await pool.end();
          },
        };
      },
    },
  ];
  if (nodeTooOld()) return list;
  const cluster = await citusSchema(name.toLowerCase().replace(/[^a-z0-9]+/g, "_"));
  list.push({
    name: "Citus",
    skip: async () => (cluster ? null : "no Citus cluster (the reason is printed above)"),
    open: async (options = {}) => {
      await cluster!.reset();
      return {
        store: cluster!.store(options),
        close: async () => undefined,
        scan: async (marker) => total(await markersOnCluster(cluster!.pool, cluster!.schema, marker)),
      };
    },
  });
  return list;
}

/** Registers `cases` on every backend (or skips them all, with the reason printed, on an old Node). */
export async function onEveryBackend(
  name: string,
  cases: (
    it: (
      title: string,
      body: (opened: Opened, backend: Backend) => Promise<void>,
      options?: { keyring?: Keyring },
    ) => void,
  ) => void,
): Promise<void> {
  const old = nodeTooOld();
  if (old) {
    console.log(`# SKIP ${name}: ${old}`);
    test(name, { skip: old }, () => undefined);
    return;
  }
  for (const backend of await backends(name)) {
    describe(`${name} on ${backend.name}`, async () => {
      const reason = (await backend.skip?.()) ?? null;
      if (reason) console.log(`# SKIP ${backend.name}: ${reason}`);
      cases((title, body, options) =>
        test(title, { skip: reason ?? false }, async () => {
          const opened = await backend.open(options);
          try {
            await body(opened, backend);
          } finally {
            await opened.close();
          }
        }),
      );
    });
  }
}
