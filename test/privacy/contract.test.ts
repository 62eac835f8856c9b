// The shipped privacy contract (agent-session/testing, runPrivacyContract) on every backend that writes to disk:
// SQLite (a file), PGlite, Postgres and a Citus cluster; traces are file bytes, every relation's pages (every
// worker's shards) and the planner statistics.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { runPrivacyContract } from "../../src/testing/index.js";
import { citusSchema, markersOnCluster, onEveryNode } from "../fixtures/citus-db.js";
import { dropSchema, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { occurrences } from "../helpers/encryption.js";
import { markersInRelations, purgeUntilComplete, sqliteFiles, total } from "../helpers/purge.js";
import { analyzeSchema, statisticsHolding } from "../helpers/purge-reach.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-privacy-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

runPrivacyContract(
  { describe, it },
  {
    name: "SQLite (file)",
    create: async () => {
      const path = join(dir, `store-${n++}.db`);
      const store = new SqliteStore(path);
      return {
        store,
        traces: async (text) => occurrences(sqliteFiles(path), text),
        analyze: async () => store.driver.run("ANALYZE"),
        close: () => store.close(),
      };
    },
  },
);

runPrivacyContract(
  { describe, it },
  {
    name: "PGlite",
    create: async () => {
      const db = await PGlite.create({ extensions: { pageinspect } });
      const store = await PostgresStore.open(db, { schema: "privacy" });
      return {
        store,
        traces: async (text) =>
          total(await markersInRelations(db, "privacy", text)) +
          (await statisticsHolding(db, "privacy", [text])).length,
        analyze: () => analyzeSchema(db, "privacy"),
        close: async () => {
          await store.close();
          await db.close();
        },
      };
    },
  },
);

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the privacy contract on Postgres: ${unavailable}`);
else {
  const pool = testPool(4);
  after(() => pool.end());
  runPrivacyContract(
    { describe, it },
    {
      name: "Postgres",
      purge: (store) => purgeUntilComplete(() => store.purge()),
      create: async () => {
        const schema = `agent_session_privacy_${process.pid}_${n++}`;
        await dropSchema(pool, schema);
        const store = await PostgresStore.open(pool, { schema });
        return {
          store,
          traces: async (text) =>
            total(await markersInRelations(pool, schema, text)) +
            (await statisticsHolding(pool, schema, [text])).length,
          analyze: () => analyzeSchema(pool, schema),
          close: async () => {
            await store.close();
            await dropSchema(pool, schema);
          },
        };
      },
    },
  );
}

const cluster = await citusSchema("privacy");
if (cluster) {
  runPrivacyContract(
    { describe, it },
    {
      name: "Citus",
      purge: (store) => purgeUntilComplete(() => store.purge()),
      create: async () => {
        await cluster.reset();
        const { pool, schema } = cluster;
        return {
          store: cluster.store(),
          traces: async (text) =>
            total(await markersOnCluster(pool, schema, text)) +
            total(
              await onEveryNode(pool, async (db) => ({
                stats: (await statisticsHolding(db, schema, [text])).length,
              })),
            ),
          analyze: () => analyzeSchema(pool, schema),
          close: async () => undefined,
        };
      },
    },
  );
}
