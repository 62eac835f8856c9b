// store.purge() on Postgres and PGlite: after every kind of delete and a purge, the deleted text is in no page of
// the store's relations (tables, TOAST tables, indexes), read with pageinspect's get_raw_page.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import pg from "pg";
import { PostgresStore, type PostgresStoreOptions } from "../src/postgres/index.js";
import { CITUS_URL, citusSchema, markersOnCluster, onEveryNode } from "./fixtures/citus-db.js";
import { ownDatabasePool } from "./fixtures/own-database.js";
import { newPGlite } from "./fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable } from "./fixtures/postgres-db.js";
import { markersInRelations, purgeUntilComplete, total, writeAndDelete } from "./helpers/purge.js";
import {
  analyzeSchema,
  ERASED_TRACES,
  reachKeyring,
  statisticsHolding,
  streamKeyAndErase,
} from "./helpers/purge-reach.js";

/** A store of a case: its pages' markers, its pool, and the table name its purge reports for the messages. */
interface Place {
  store: PostgresStore;
  db: pg.Pool;
  messages: string;
  markers(marker?: string): Promise<Record<string, number>>;
  /** The statistics (every node's on a cluster) holding an erased trace, by `node/table.column: trace`. */
  statistics(): Promise<Record<string, number>>;
  /** ANALYZE of every table of the store, as autovacuum would run it. */
  analyze(): Promise<void>;
}

/**
 * The counts of `found` that are of indexes (theirs and TOAST tables' indexes): not of the store's tables, nor of
 * their shards (a table's name and `_<number>`) or TOAST tables. `messages` names the store's schema.
 */
async function indexesOnly(db: pg.Pool, messages: string, found: Record<string, number>) {
  const schema = (messages.split(".")[0] ?? "").replaceAll('"', "");
  const { rows } = await db.query<{ name: string }>(
    "SELECT relname AS name FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind IN ('r', 'p')",
    [schema],
  );
  const tables = new Set(rows.map((row) => row.name));
  const relation = (name: string) => (name.split(".").pop() ?? "").replaceAll('"', "").replace(/_\d+$/, "");
  return Object.fromEntries(
    Object.entries(found).filter(([name]) => !tables.has(relation(name)) && !/pg_toast_\d+$/.test(name)),
  );
}

/** The purge cases on a target: `place(tag)` gives each an empty store of its own; `done` drops or empties it. */
function purgeCases(
  name: string,
  skip: string | false,
  place: (tag: string, options?: PostgresStoreOptions) => Promise<Place>,
  done: () => Promise<void>,
) {
  describe(`${name} purge`, { skip }, () => {
    for (const mode of ["rewrite", "vacuum"] as const) {
      test(`${mode}: what a purge leaves of deleted text in the store's pages`, async () => {
        // Without a change log: its rows are live events (a compaction's summary among them) kept until its
        // retention prunes them, not deleted rows (docs/PRIVACY.md).
        const { store, db, messages, markers } = await place(mode);
        try {
          await writeAndDelete(store);
          assert.ok(total(await markers()) > 0, "the deletes alone leave the text in pages");
          const report = await purgeUntilComplete(() => store.purge({ mode }));
          assert.equal(report.complete, true, JSON.stringify(report));
          const left = await markers();
          if (mode === "rewrite") {
            assert.equal(total(left), 0, JSON.stringify(left));
          } else {
            // VACUUM frees the dead tuples and REINDEX rebuilds the indexes (the GIN keys are gone), but a heap
            // page that keeps live rows keeps the freed bytes in its free space: the limit of this mode
            // (docs/PRIVACY.md). Which heap pages keep some depends on where each row landed, which opportunistic
            // pruning and autovacuum change under load: every index must be clean, any table may keep remnants.
            const indexes = await indexesOnly(db, messages, left);
            assert.equal(total(indexes), 0, JSON.stringify(left));
          }
          assert.ok((await store.searchMessages("kept", { limit: 1000 })).length > 0);
          assert.equal((await purgeUntilComplete(() => store.purge({ mode }))).complete, true, "idempotent");
        } finally {
          await store.close();
          await done();
        }
      });
    }

    for (const mode of ["rewrite", "vacuum"] as const) {
      test(`${mode}: erased owners' stream chunks, key rows and statistics are gone after a complete purge`, async () => {
        const { store, markers, statistics, analyze } = await place(`reach_${mode}`, {
          keyring: reachKeyring(),
        });
        try {
          await streamKeyAndErase(store, analyze);
          const traces = async () => {
            const found: Record<string, number> = {};
            for (const trace of ERASED_TRACES) found[trace] = total(await markers(trace));
            return found;
          };
          assert.ok(
            Object.values(await traces()).every((n) => n > 0),
            JSON.stringify(await traces()),
          );
          assert.ok(total(await statistics()) > 0, "the statistics sampled the erased owners' data");
          const report = await purgeUntilComplete(() => store.purge({ mode }));
          assert.equal(report.complete, true, JSON.stringify(report));
          // Vacuum mode leaves freed bytes in pages that keep live rows (see above): its pages are not checked.
          const none = Object.fromEntries(ERASED_TRACES.map((t) => [t, 0]));
          assert.deepEqual(
            { statistics: await statistics(), pages: mode === "rewrite" ? await traces() : none },
            { statistics: {}, pages: none },
          );
        } finally {
          await store.close();
          await done();
        }
      });
    }

    test("a purge that cannot get a table's lock in time says so and blocks nobody", async () => {
      const { store, db, messages } = await place("lock");
      const holder = await db.connect();
      try {
        await holder.query("BEGIN");
        await holder.query(`LOCK TABLE ${messages} IN ACCESS SHARE MODE`);
        // On Citus lockTimeoutMs bounds each table's whole VACUUM FULL across its shards (postgres-vacuum.ts), which
        // takes longer than 50 ms: there the default.
        const report = await store.purge({ lockTimeoutMs: name === "citus" ? 2000 : 50 });
        assert.equal(report.complete, false);
        // Tables only: the "open snapshots" and "dead rows" steps may be incomplete too when another test's
        // transaction on the same server is older than the purge (the horizon is the database's), which the
        // parallel test run can hold.
        const blocked = report.steps
          .filter((s) => s.incomplete !== undefined && !HORIZON_STEPS.has(s.action))
          .map((s) => s.target);
        assert.deepEqual(blocked, [messages]);
      } finally {
        await holder.query("ROLLBACK");
        holder.release();
        await store.close();
        await done();
      }
    });

    /**
     * Runs `body` on a store whose deletes happened while a reader held a snapshot from before them; `end` commits
     * the reader (once), and the store's pages are checked clean after `body`.
     */
    async function withOlderReader(
      tag: string,
      body: (store: PostgresStore, end: () => Promise<void>) => Promise<void>,
    ) {
      const { store, db, markers } = await place(tag);
      const reader = await db.connect();
      let open = false;
      const end = async () => {
        if (!open) return;
        open = false;
        await reader.query("COMMIT");
      };
      try {
        await reader.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
        open = true;
        await reader.query("SELECT 1");
        await writeAndDelete(store);
        await body(store, end);
        const left = await markers();
        assert.equal(total(left), 0, JSON.stringify(left));
      } finally {
        if (open) await reader.query("ROLLBACK");
        reader.release();
        await store.close();
        await done();
      }
    }

    test("a transaction open since before the purge keeps deleted rows readable: the report says so", () =>
      withOlderReader("snapshot", async (store, end) => {
        const report = await store.purge();
        assert.equal(report.complete, false, JSON.stringify(report));
        const held = report.steps.find((s) => s.action === "open snapshots");
        assert.match(held?.incomplete ?? "", /purge again/);
        // The rewrite ran while the reader held its snapshot: VACUUM FULL's own count says it kept the rows. On
        // Citus the rows are in the workers' shards, which a coordinator's snapshot does not hold back (a worker's
        // does: the case below), so every count, the workers' relayed ones too, was read and the step covers them.
        const dead = report.steps.find((s) => s.action === "dead rows");
        assert.equal(dead?.target, undefined, JSON.stringify(report));
        if (name === "citus")
          assert.doesNotMatch(dead?.incomplete ?? "", /not verified/, JSON.stringify(report));
        else assert.match(dead?.incomplete ?? "", /"agent_messages" [1-9]\d*/, JSON.stringify(report));
        await end();
        assert.equal((await purgeUntilComplete(() => store.purge())).complete, true);
      }));

    test("a transaction open as the purge starts and ending while it runs: the purge waits, then leaves nothing", () =>
      withOlderReader("ending", async (store, end) => {
        // Rewritten while the reader still held its snapshot, the tables would keep the deleted rows, yet the
        // reader would be gone by the end of the purge, so a check at the end alone would call the purge complete.
        const purging = store.purge({ lockTimeoutMs: 10_000 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await end();
        const report = await purging;
        assert.equal(report.complete, true, JSON.stringify(report));
      }));

    test("bad options are INVALID_ARGUMENT", async () => {
      const { store } = await place("bad");
      try {
        await assert.rejects(store.purge({ mode: "nope" as never }), { code: "INVALID_ARGUMENT" });
        await assert.rejects(store.purge({ lockTimeoutMs: 0 }), { code: "INVALID_ARGUMENT" });
      } finally {
        await store.close();
        await done();
      }
    });
  });
}

/** The steps whose outcome is the database's horizon, which other test files' transactions can hold back. */
const HORIZON_STEPS = new Set(["open snapshots", "dead rows"]);

/** Each hit once, as a count, so a case's findings read as one object. */
const counted = (hits: readonly string[]) => Object.fromEntries(hits.map((hit) => [hit, 1]));

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the Postgres purge tests: ${unavailable}`);
// The cluster: one distributed schema, emptied for each case; its pages are read on the coordinator and on every
// worker. Set up before any case is registered (see postgres-transfer.test.ts).
const cluster = await citusSchema("purge");
// The server's cases on a database of their own: other test files' transactions do not hold their purges back.
const pool = await ownDatabasePool("purge_postgres", unavailable);
let schema = "";
purgeCases(
  "Postgres",
  unavailable ?? false,
  async (tag, options = {}) => {
    schema = `agent_session_purge_${tag}_${process.pid}`;
    await dropSchema(pool!, schema);
    const store = await PostgresStore.open(pool!, { ...options, schema });
    const at = schema;
    return {
      store,
      db: pool!,
      messages: `"${schema}"."agent_messages"`,
      markers: (marker) => markersInRelations(pool!, at, marker),
      statistics: async () => counted(await statisticsHolding(pool!, at)),
      analyze: () => analyzeSchema(pool!, at),
    };
  },
  () => dropSchema(pool!, schema),
);

if (cluster) {
  purgeCases(
    "citus",
    false,
    async (_tag, options = {}) => {
      await cluster.reset();
      const { pool: db, schema: at } = cluster;
      return {
        store: cluster.store(options),
        db,
        messages: cluster.tables.messages,
        markers: (marker) => markersOnCluster(db, at, marker),
        statistics: () => onEveryNode(db, async (node) => counted(await statisticsHolding(node, at))),
        analyze: () => analyzeSchema(db, at),
      };
    },
    async () => undefined,
  );
}

test("citus purge: a snapshot open on a worker since before the deletes: the wait and the dead rows step name that worker", {
  skip: cluster ? false : "no Citus cluster",
  timeout: 120_000,
}, async () => {
  const { rows } = await cluster!.pool.query<{ host: string; port: number }>(
    "SELECT node_name AS host, node_port AS port FROM citus_get_active_worker_nodes() ORDER BY 2 LIMIT 1",
  );
  const node = `${rows[0]!.host}:${rows[0]!.port}`;
  const url = new URL(CITUS_URL);
  url.hostname = rows[0]!.host;
  url.port = String(rows[0]!.port);
  const worker = new pg.Client({ connectionString: url.toString() });
  await worker.connect();
  await cluster!.reset();
  const store = cluster!.store();
  let open = false;
  try {
    await worker.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
    open = true;
    await worker.query("SELECT 1");
    await writeAndDelete(store);
    // Rewrite mode only: "vacuum" mode's REINDEX … CONCURRENTLY, run on the workers' shards, gives up on the
    // worker's older transaction (its own case: purge-reindex.test.ts).
    // Enough for each table's whole VACUUM FULL across its shards, which lockTimeoutMs bounds on Citus.
    const report = await store.purge({ lockTimeoutMs: 1000 });
    const step = (action: string) => report.steps.find((s) => s.action === action)?.incomplete ?? "";
    assert.match(step("open snapshots"), new RegExp(`${node} pid \\d+`), JSON.stringify(report));
    // The worker kept the deleted rows of its shards: named by shard and worker, and never by another worker.
    assert.match(
      step("dead rows"),
      new RegExp(
        `^not complete: VACUUM kept dead row versions it cannot remove yet \\(.*\\.agent_[a-z_]+_\\d+ [1-9]\\d* on ${node}`,
      ),
      JSON.stringify(report),
    );
    assert.doesNotMatch(step("dead rows"), /not verified/, JSON.stringify(report));
    const on = [...step("dead rows").matchAll(/ on (\S+:\d+)/g)].map((m) => m[1]);
    assert.deepEqual([...new Set(on)], [node], JSON.stringify(report));
    await worker.query("ROLLBACK");
    open = false;
    const done = await purgeUntilComplete(() => store.purge());
    assert.equal(done.complete, true, JSON.stringify(done));
    assert.equal(done.steps.find((s) => s.action === "dead rows")?.incomplete, undefined);
    const left = await markersOnCluster(cluster!.pool, cluster!.schema);
    assert.equal(total(left), 0, JSON.stringify(left));
  } finally {
    if (open) await worker.query("ROLLBACK");
    await worker.end();
  }
});

test("PGlite purge: erased owners' stream chunks, key rows and statistics are gone", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite({ extensions: { pageinspect } });
  const store = await PostgresStore.open(db, { schema: "reach", keyring: reachKeyring() });
  try {
    await streamKeyAndErase(store, () => analyzeSchema(db, "reach"));
    assert.ok((await statisticsHolding(db, "reach")).length > 0);
    assert.equal((await store.purge()).complete, true);
    const pages: Record<string, number> = {};
    for (const t of ERASED_TRACES) pages[t] = total(await markersInRelations(db, "reach", t));
    const none = Object.fromEntries(ERASED_TRACES.map((t) => [t, 0]));
    assert.deepEqual(
      { statistics: await statisticsHolding(db, "reach"), pages },
      { statistics: [], pages: none },
    );
  } finally {
    await store.close();
    await db.close();
  }
});

test("PGlite purge: deleted text is in no page after purge()", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite({ extensions: { pageinspect } });
  const store = await PostgresStore.open(db, { schema: "purged" });
  try {
    await writeAndDelete(store);
    assert.ok(total(await markersInRelations(db, "purged")) > 0);
    const report = await store.purge();
    assert.equal(report.complete, true, JSON.stringify(report));
    const left = await markersInRelations(db, "purged");
    assert.equal(total(left), 0, JSON.stringify(left));
    assert.equal((await store.purge({ mode: "vacuum" })).complete, true);
  } finally {
    await store.close();
    await db.close();
  }
});
