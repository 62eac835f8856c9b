// A "vacuum"-mode purge's concurrent reindex, bounded (src/sql/purge/postgres-reindex.ts, citus/reindex.ts): a
// transaction older than the reindex makes it give up after lockTimeoutMs, reported incomplete with the table named,
// and the invalid index copies it built are dropped, then or (when a lock on the table keeps them) at the start of
// the next purge. On a database of its own on the shared Postgres server (fixtures/own-database.ts: the reindex waits
// for the older transactions of its database, another file's are not) and, with a snapshot held on a worker, on the
// Citus cluster.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pg from "pg";
import { PostgresStore } from "../src/postgres/index.js";
import type { PurgeReport } from "../src/store/purge.js";
import { CITUS_URL, citusSchema, markersOnCluster, onEveryNode } from "./fixtures/citus-db.js";
import { ownDatabasePool } from "./fixtures/own-database.js";
import { dropSchema, postgresUnavailable, type Runner } from "./fixtures/postgres-db.js";
import { markersInRelations, purgeUntilComplete, total, writeAndDelete } from "./helpers/purge.js";

/** A target: a store with deleted text, where its invalid indexes and markers are read, and a reader's connection. */
interface Place {
  store: PostgresStore;
  messages: string;
  /** The first table the purge reindexes. */
  heads: string;
  /** Every invalid index of the store's tables and their TOAST tables (on a cluster, every node's). */
  invalid(): Promise<Record<string, number>>;
  markers(): Promise<Record<string, number>>;
  /** A connection for a reader: where its snapshot holds the reindex back. */
  reader(): Promise<{ query: Runner["query"]; end(): Promise<void> }>;
}

/** Every invalid index of the tables of `schema` and of their TOAST tables, by name. */
async function invalidIndexes(db: Runner, schema: string): Promise<Record<string, number>> {
  const { rows } = await db.query(
    `SELECT i.indexrelid::regclass::text AS name FROM pg_index i
      WHERE NOT i.indisvalid AND i.indrelid IN (SELECT c.oid FROM pg_class c WHERE c.relnamespace = $1::regnamespace
        UNION ALL SELECT c.reltoastrelid FROM pg_class c WHERE c.relnamespace = $1::regnamespace)`,
    [schema],
  );
  return Object.fromEntries((rows as { name: string }[]).map((row) => [row.name, 1]));
}

/**
 * What the reader's backend holds, seen from itself: its snapshot's xmin, its transaction's state and its locks (the
 * second case below prints it when the reindex did not wait for it, to say why if it happens again).
 */
async function heldState(held: { query: Runner["query"] }): Promise<string> {
  const { rows } = await held.query(
    `SELECT a.pid, a.state, a.backend_xmin::text AS xmin, txid_current_if_assigned()::text AS xid,
            current_setting('transaction_isolation') AS isolation,
            (SELECT json_agg(l.relation::regclass::text || ' ' || l.mode) FROM pg_locks l
              WHERE l.pid = a.pid AND l.relation IS NOT NULL) AS locks
       FROM pg_stat_activity a WHERE a.pid = pg_backend_pid()`,
  );
  return JSON.stringify(rows);
}

const REINDEX = "REINDEX TABLE CONCURRENTLY";
const reindexOf = (report: PurgeReport, table: string) =>
  report.steps.find((s) => s.action === REINDEX && s.target === table);

/**
 * The report's reindex steps, held back by one transaction: the first gave up after `timeout` ms, naming its table
 * (the step's target) and why; the later ones were not run while the same transaction stayed open, naming it.
 */
function assertHeldBack(report: PurgeReport, first: string, messages: string, timeout: number) {
  const json = JSON.stringify(report);
  assert.equal(report.complete, false);
  assert.match(
    reindexOf(report, first)?.incomplete ?? "",
    new RegExp(`^not complete: .*lockTimeoutMs \\(${timeout} ms`),
    json,
  );
  assert.match(
    reindexOf(report, messages)?.incomplete ?? "",
    /^not run: .* are still open \(.*pid \d+/,
    json,
  );
}

function reindexCases(
  name: string,
  skip: string | false,
  place: () => Promise<Place>,
  done: () => Promise<void>,
) {
  describe(`${name}: a vacuum-mode purge's reindex`, { skip }, () => {
    test("gives up on a snapshot older than it after lockTimeoutMs, says so, and leaves no invalid index", async () => {
      const { store, messages, heads, invalid, reader } = await place();
      const held = await reader();
      let open = false;
      try {
        await held.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
        open = true;
        await held.query("SELECT 1");
        await writeAndDelete(store);
        const report = await store.purge({ mode: "vacuum", lockTimeoutMs: 300 });
        console.log(`${name}: the purge with a snapshot held returned after ${report.ms} ms`);
        assertHeldBack(report, heads, messages, 300);
        assert.deepEqual(await invalid(), {}, JSON.stringify(report));
        await held.query("COMMIT");
        open = false;
        const doneReport = await purgeUntilComplete(() => store.purge({ mode: "vacuum" }));
        assert.equal(doneReport.complete, true, JSON.stringify(doneReport));
      } finally {
        if (open) await held.query("ROLLBACK");
        await held.end();
        await store.close();
        await done();
      }
    });

    // Once a todo: in one CI run, on the database every Postgres test file shared, the reindex did not wait for the
    // reader (the purge was complete, no copy kept). If it happens again, the print says what the reader held.
    test("copies a lock on the table keeps are named, then dropped by the next purge; then nothing is left", async () => {
      const { store, messages, heads, invalid, markers, reader } = await place();
      const held = await reader();
      let open = false;
      try {
        await writeAndDelete(store);
        await held.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
        open = true;
        await held.query(`SELECT count(*) FROM ${heads}`);
        const report = await store.purge({ mode: "vacuum", lockTimeoutMs: 300 });
        if (report.complete)
          console.log(`${name}: the reindex did not wait; the reader then: ${await heldState(held)}`);
        assertHeldBack(report, heads, messages, 300);
        const kept = report.steps.filter((s) => s.action.startsWith("DROP INDEX") && s.incomplete);
        assert.ok(kept.length > 0, JSON.stringify(report));
        assert.ok(total(await invalid()) > 0, "the reader's lock kept the copies");
        await held.query("COMMIT");
        open = false;
        const next = await purgeUntilComplete(() => store.purge({ mode: "vacuum" }));
        assert.equal(next.complete, true, JSON.stringify(next));
        assert.ok(
          next.steps.some((s) => s.action.startsWith("DROP INDEX") && !s.incomplete),
          JSON.stringify(next),
        );
        assert.deepEqual(await invalid(), {});
        const rewritten = await purgeUntilComplete(() => store.purge());
        assert.equal(rewritten.complete, true, JSON.stringify(rewritten));
        const left = await markers();
        assert.equal(total(left), 0, JSON.stringify(left));
      } finally {
        if (open) await held.query("ROLLBACK");
        await held.end();
        await store.close();
        await done();
      }
    });
  });
}

const unavailable = await postgresUnavailable();
const cluster = await citusSchema("reindex");
const pool = await ownDatabasePool("purge_reindex", unavailable);
const schema = `agent_session_reindex_${process.pid}`;
reindexCases(
  "Postgres",
  unavailable ?? false,
  async () => {
    await dropSchema(pool!, schema);
    return {
      store: await PostgresStore.open(pool!, { schema }),
      messages: `"${schema}"."agent_messages"`,
      heads: `"${schema}"."agent_session_heads"`,
      invalid: () => invalidIndexes(pool!, schema),
      markers: () => markersInRelations(pool!, schema),
      reader: async () => {
        const connection = await pool!.connect();
        return {
          query: (sql, params) => connection.query(sql, params),
          end: async () => connection.release(),
        };
      },
    };
  },
  () => dropSchema(pool!, schema),
);

if (cluster) {
  // The first case's snapshot on a worker (the reindex of the shard placements waits there); the second's reader
  // on the coordinator, where it reads the heads table: the coordinator's own copies are kept by its lock.
  let onWorker = true;
  reindexCases(
    "citus",
    false,
    async () => {
      await cluster.reset();
      const { pool: db, schema: at } = cluster;
      const worker = onWorker;
      onWorker = false;
      return {
        store: cluster.store(),
        messages: cluster.tables.messages,
        heads: cluster.tables.heads,
        invalid: () => onEveryNode(db, (node) => invalidIndexes(node, at)),
        markers: () => markersOnCluster(db, at),
        reader: async () => {
          if (!worker) {
            const connection = await db.connect();
            return {
              query: (sql, params) => connection.query(sql, params),
              end: async () => connection.release(),
            };
          }
          const { rows } = await db.query<{ host: string; port: number }>(
            "SELECT node_name AS host, node_port AS port FROM citus_get_active_worker_nodes() ORDER BY 2 LIMIT 1",
          );
          const url = new URL(CITUS_URL);
          url.hostname = rows[0]!.host;
          url.port = String(rows[0]!.port);
          const client = new pg.Client({ connectionString: url.toString() });
          await client.connect();
          return { query: (sql, params) => client.query(sql, params), end: () => client.end() };
        },
      };
    },
    async () => undefined,
  );
}
