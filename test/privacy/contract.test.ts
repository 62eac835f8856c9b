// The shipped privacy contract (agent-session/testing, runPrivacyContract) on every backend that writes to disk:
// SQLite (a file), PGlite (a data directory), Postgres and a Citus cluster; traces are file bytes (every file of
// PGlite's data directory, its WAL and catalog included), every relation's pages (every worker's shards), the
// planner statistics and the pages of the catalog that keeps them, pg_statistic (on every node). Every store has the suite's embedder: sqlite-vec on SQLite, pgvector
// on PGlite, float4[] on Postgres and Citus (no pgvector there); the CLI's prune runs through a store without it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import { vector } from "@electric-sql/pglite-pgvector";
import { PostgresStore } from "../../src/postgres/index.js";
import { POSTGRES_OWNER_DATA } from "../../src/sql/owner-data/postgres.js";
import { SQLITE_OWNER_DATA } from "../../src/sql/owner-data/sqlite.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { runPrivacyContract } from "../../src/testing/index.js";
import { citusSchema, markersOnCluster, onEveryNode } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { occurrences } from "../helpers/encryption.js";
import { filesUnder, markersInRelations, purgeUntilComplete, sqliteFiles, total } from "../helpers/purge.js";
import { analyzeSchema, statisticsHolding, statisticsPagesHolding } from "../helpers/purge-reach.js";
import { postgresRowCounts, sqliteRowCounts } from "../helpers/rows-holding.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-privacy-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const FEATURES = ["changeLog", "embedder"] as const;

runPrivacyContract(
  { describe, it },
  {
    name: "SQLite (file)",
    declaration: SQLITE_OWNER_DATA,
    features: [...FEATURES, "sqlite-vec"],
    create: async ({ embedder }) => {
      const path = join(dir, `store-${n++}.db`);
      // Values split at 4 KB (as a Durable Object's at 2 MB), so a long message has continuation rows.
      const store = new SqliteStore(path, { changeLog: true, maxValueBytes: 4096, embedder });
      return {
        store,
        // As the CLI opens a file: no embedder, so it cannot touch sqlite-vec's table (the purge loads it).
        withoutEmbedder: async () => new SqliteStore(path),
        traces: async (text) => occurrences(sqliteFiles(path), text),
        rowCounts: sqliteRowCounts(store.driver),
        analyze: async () => store.driver.run("ANALYZE"),
        close: () => store.close(),
      };
    },
  },
);

describe("PGlite", { skip: pgliteSwitchedOff() ?? false }, () => {
  runPrivacyContract(
    { describe, it },
    {
      name: "PGlite",
      declaration: POSTGRES_OWNER_DATA,
      features: FEATURES,
      create: async ({ embedder }) => {
        // A data directory on disk: its files are the app's, copied and backed up as a SQLite file is, so every
        // byte of them counts (the WAL segments and the catalog's pages too), not only the store's relations.
        const dataDir = join(dir, `pglite-${n++}`);
        const db = await newPGlite({ dataDir, extensions: { pageinspect, vector } });
        const store = await PostgresStore.open(db, { schema: "privacy", changeLog: true, embedder });
        return {
          store,
          withoutEmbedder: () => PostgresStore.open(db, { schema: "privacy" }),
          rowCounts: postgresRowCounts(db, "privacy"),
          traces: async (text) => {
            // What the buffers hold reaches the files at the next checkpoint (a close makes one): count it now.
            await db.query("CHECKPOINT");
            return (
              occurrences(filesUnder(dataDir), text) +
              total(await markersInRelations(db, "privacy", text)) +
              (await statisticsHolding(db, "privacy", [text])).length
            );
          },
          analyze: () => analyzeSchema(db, "privacy"),
          close: async () => {
            await store.close();
            await db.close();
            rmSync(dataDir, { recursive: true, force: true });
          },
        };
      },
    },
  );
});

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the privacy contract on Postgres: ${unavailable}`);
else {
  // On the shared database: its traces include pg_statistic's pages, whose rewrite keeps the statistics an ANALYZE
  // replaced while a transaction of any database holds an older transaction id; the purge waits for those and names
  // them (src/sql/purge/postgres-horizon.ts), which a database of its own would not spare it.
  const pool = testPool(4);
  after(() => pool.end());
  runPrivacyContract(
    { describe, it },
    {
      name: "Postgres",
      declaration: POSTGRES_OWNER_DATA,
      features: FEATURES,
      purge: (store) => purgeUntilComplete(() => store.purge()),
      create: async ({ embedder }) => {
        const schema = `agent_session_privacy_${process.pid}_${n++}`;
        await dropSchema(pool, schema);
        const store = await PostgresStore.open(pool, { schema, changeLog: true, embedder });
        return {
          store,
          withoutEmbedder: () => PostgresStore.open(pool, { schema }),
          rowCounts: postgresRowCounts(pool, schema),
          traces: async (text) =>
            total(await markersInRelations(pool, schema, text)) +
            (await statisticsHolding(pool, schema, [text])).length +
            (await statisticsPagesHolding(pool, text)),
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
      declaration: POSTGRES_OWNER_DATA,
      features: FEATURES,
      purge: (store) => purgeUntilComplete(() => store.purge()),
      create: async ({ embedder }) => {
        const { pool, schema } = cluster;
        // A fresh schema has no vector tables (the previous case's store made them, referencing the messages).
        await pool.query(
          `DROP TABLE IF EXISTS "${schema}".agent_message_vectors, "${schema}".agent_vector_state`,
        );
        await cluster.reset();
        const store = cluster.store({ changeLog: true, embedder });
        return {
          store,
          withoutEmbedder: async () => cluster.store(),
          rowCounts: postgresRowCounts(pool, schema),
          traces: async (text) =>
            total(await markersOnCluster(pool, schema, text)) +
            total(
              await onEveryNode(pool, async (db) => ({
                stats: (await statisticsHolding(db, schema, [text])).length,
                statisticPages: await statisticsPagesHolding(db, text),
              })),
            ),
          analyze: () => analyzeSchema(pool, schema),
          // Its background work stops before the next case drops the vector tables (the fixture closes it again).
          close: () => store.close(),
        };
      },
    },
  );
}
