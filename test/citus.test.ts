// The routing proof on a Citus cluster (docs/POSTGRES.md, "Past one server"): the store opened on the coordinator
// with `distributed: true` runs one session's work on one shard. One distributed schema for the whole file, emptied
// between tests: distributing tables costs seconds. The storage contract there: test/citus-contract.test.ts.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import pg from "pg";
import { PostgresStore } from "../src/postgres/index.js";
import type { PostgresStoreOptions } from "../src/postgres/schema.js";
import { logNames } from "../src/sql/change-log/postgres-append-log.js";
import { tableNames } from "../src/sql/engines/postgres/tables.js";
import { ids, msg } from "../src/testing/contract/harness.js";
import { CITUS_URL, citusPool, citusUnavailable, emptyAll } from "./fixtures/citus-db.js";
import { plansOf as coordinatorPlans, taskCounts } from "./fixtures/citus-plans.js";
import { dropSchema } from "./fixtures/postgres-db.js";

// Per process, so two runs at once (two checkouts, one cluster) never drop each other's tables.
const SCHEMA = `agent_session_citus_${process.pid}`;
const unavailable = await citusUnavailable();

if (unavailable) {
  console.log(`Skipping the Citus tests: ${unavailable}`);
  test("citus", { skip: unavailable }, () => undefined);
} else {
  const pool = citusPool();
  const options = { schema: SCHEMA, distributed: true };
  const t = tableNames(options);
  await dropSchema(pool, SCHEMA);
  await PostgresStore.open(pool, options);
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  });

  /** The coordinator's plans of what `run` sends to a store on this file's schema (`extra` beside its options). */
  const plansOf = (run: (store: PostgresStore) => Promise<void>, extra: PostgresStoreOptions = {}) =>
    coordinatorPlans(pool, { ...options, ...extra }, run);

  /**
   * A reader of the two-phase-commit records of the coordinator backend `pid` (Citus's gid names it) made since
   * this call: a new connection may reuse the pid of one whose records Citus's recovery has not removed yet.
   */
  async function twoPhaseRecordsSince(pid: number): Promise<() => Promise<string[]>> {
    const gids = async () =>
      (
        await pool.query<{ gid: string }>("SELECT gid FROM pg_dist_transaction WHERE gid LIKE $1", [
          `citus\\_%\\_${pid}\\_%`,
        ])
      ).rows.map((r) => r.gid);
    const before = new Set(await gids());
    return async () => (await gids()).filter((gid) => !before.has(gid));
  }

  /**
   * A logged store on a connection of its own that records the statements it sends; `beforeLogRow.fn`, when set,
   * runs before a change-log row's statement is sent.
   */
  async function recordingStore() {
    const client = new pg.Client({ connectionString: CITUS_URL });
    client.on("error", () => undefined); // a test terminates the backend on purpose
    await client.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const sent: string[] = [];
    const beforeLogRow: { fn?: () => Promise<unknown> } = {};
    const recording = {
      query: async (text: string, values?: unknown[]) => {
        sent.push(text);
        if (beforeLogRow.fn && /AS locked/.test(text)) await beforeLogRow.fn();
        return client.query(text, values);
      },
    };
    const store = new PostgresStore(recording as never, { ...options, changeLog: true, prepare: false });
    return {
      pid: rows[0]?.pid ?? 0,
      twoPhase: await twoPhaseRecordsSince(rows[0]?.pid ?? 0),
      sent,
      store,
      beforeLogRow,
      end: () => client.end().catch(() => undefined),
    };
  }

  describe("citus: one session's work runs on one shard", () => {
    test("a history read and a search of one session are each one statement of one task", async () => {
      await emptyAll(pool, t);
      const store = new PostgresStore(pool, options);
      for (const name of ["a", "b", "c"]) {
        const chat = store.session(name);
        for (let i = 0; i < 5; i++)
          await chat.appendMessage(msg(`${name}${i}`, `routing proof ${name} ${i}`));
      }
      assert.deepEqual(ids(await store.session("b").getHistory()), ["b0", "b1", "b2", "b3", "b4"]);
      const history = await plansOf(async (s) => void (await s.session("b").getHistory()));
      assert.equal(history.length, 1, history.join("\n---\n"));
      assert.deepEqual(taskCounts(history[0]!), [1], history[0]);
      assert.doesNotMatch(history[0]!, /Distributed Subplan/, history[0]);

      const hits = await store.searchMessages("routing proof", { sessionId: "b" });
      assert.deepEqual(new Set(hits.map((h) => h.sessionId)), new Set(["b"]));
      const search = await plansOf(
        async (s) => void (await s.searchMessages("routing proof", { sessionId: "b" })),
      );
      // The candidates, then the page: a query of the messages alone (Citus's fast path), since whether the session
      // has overlays came with the candidates.
      assert.equal(search.length, 2, search.join("\n---\n"));
      for (const plan of search) {
        assert.deepEqual(taskCounts(plan), [1], plan);
        assert.doesNotMatch(plan, /Distributed Subplan/, plan);
      }
    });

    test("an append is one call the coordinator delegates to the session's worker: no subplan, no two-phase commit", async () => {
      await emptyAll(pool, t);
      const client = new pg.Client({ connectionString: CITUS_URL });
      await client.connect();
      try {
        const [{ pid }] = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows as [
          { pid: number },
        ];
        const sent: string[] = [];
        const recording = {
          query: (text: string, values?: unknown[]) => {
            sent.push(text);
            return client.query(text, values);
          },
        };
        const prepared = await twoPhaseRecordsSince(pid);
        const store = new PostgresStore(recording as never, { ...options, prepare: false });
        await store.session("a").appendMessage(msg("a0", "first")); // a new session: its head is created
        sent.length = 0;
        await store.session("a").appendMessage(msg("a1", "second")); // after the tip
        await store.session("a").appendMessage(msg("a2", "branch"), "a0"); // after an explicit parent
        assert.deepEqual(ids(await store.session("a").getHistory()), ["a0", "a2"]);
        // Two statements an append: the message seq drawn on the coordinator, then the call (citus/append-function.ts).
        const appends = sent.slice(0, 4);
        assert.equal(appends.filter((text) => /nextval/.test(text)).length, 2, appends.join("\n---\n"));
        const calls = appends.filter((text) => /agent_append_v5/.test(text));
        assert.equal(calls.length, 2, appends.join("\n---\n"));
        // Explained on this connection: one task, the function run on one worker. (A fresh connection: once, while another process distributed tables on the same
        // cluster, a pooled connection of this file planned the call on the coordinator; see docs/POSTGRES.md.)
        // The call's 36 arguments (a tip append of "a3", under a clear guard); EXPLAIN plans the call without running it.
        const args = [
          "a",
          "a3",
          null,
          "leaf",
          false,
          null,
          "user",
          "{}",
          new Date().toISOString(),
          2,
          1,
          null,
          null,
        ];
        const { rows } = await client.query(`EXPLAIN (COSTS OFF) ${calls[0]}`, [
          ...args,
          "1",
          false,
          ...new Array<null>(19).fill(null),
          true,
          null,
        ]);
        const plan = rows.map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]).join("\n");
        assert.deepEqual(taskCounts(plan), [1], plan);
        assert.match(plan, /Function Scan/, plan);
        assert.doesNotMatch(plan, /Distributed Subplan/, plan);
        // Each append committed on its worker alone: none left a two-phase-commit record.
        assert.deepEqual(await prepared(), []);
      } finally {
        await client.end();
      }
    });

    test("a logged append is one transaction: the routed call and its log row, committed in one phase", async () => {
      await emptyAll(pool, t);
      const log = logNames(t).table; // made by the store's first logged write
      const { sent, store, end, twoPhase } = await recordingStore();
      try {
        const chat = store.session("a");
        await chat.appendMessage(msg("a0", "first"));
        await chat.appendMessage(msg("a1", "second"));
        await chat.appendMessage(msg("a2", "branch"), "a0");
        assert.equal((await chat.appendMessage(msg("a2", "again"), "a0")).inserted, false);
        // Per append a transaction: the draw, the call, the log row (citus/routed-log.ts); a duplicate inserts none
        // there (the feed records it afterwards, as on one node).
        assert.equal(sent.filter((text) => /agent_append_v5/.test(text)).length, 4, sent.join("\n---\n"));
        assert.equal(sent.filter((text) => /AS locked/.test(text)).length, 3, sent.join("\n---\n"));
        assert.equal(sent.filter((text) => /^BEGIN/.test(text)).length, 4, sent.join("\n---\n"));
        const { rows } = await pool.query(
          `SELECT kind, ids, parent_id FROM ${log} WHERE session_id = 'a' ORDER BY seq`,
        );
        assert.deepEqual(
          rows.map((r) => [r.kind, JSON.parse(r.ids), r.parent_id]),
          [
            ["append", ["a0"], null],
            ["append", ["a1"], "a0"],
            ["append", ["a2"], "a0"],
            ["append", ["a2"], "a0"], // the duplicate's, which the feed writes after the call
          ],
        );
        assert.deepEqual(await twoPhase(), []);
      } finally {
        await end();
      }
    });

    test("a logged append whose log row fails, or whose writer dies before it, leaves no message", async () => {
      await emptyAll(pool, t);
      const log = logNames(t).table;
      const { pid, store, end, beforeLogRow, twoPhase } = await recordingStore();
      const stored = async (id: string) =>
        (
          await pool.query(
            `SELECT count(*)::int AS n FROM ${t.messages} WHERE session_id = 'k' AND id = $1`,
            [id],
          )
        ).rows[0].n as number;
      try {
        await store.session("k").appendMessage(msg("k0", "first")); // the log table exists from here
        // The log insert fails (a trigger of this test's): the call's message on the worker rolls back with it.
        await pool.query(`CREATE FUNCTION ${SCHEMA}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation'; END $$`);
        await pool.query(
          `CREATE TRIGGER refuse BEFORE INSERT ON ${log} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.refuse()`,
        );
        try {
          await assert.rejects(store.session("k").appendMessage(msg("k1", "refused")), /refused/);
        } finally {
          await pool.query(`DROP TRIGGER refuse ON ${log}`);
        }
        assert.equal(await stored("k1"), 0);
        // The writer's connection dies between the call and the log row: nothing of the append stays.
        beforeLogRow.fn = () => pool.query("SELECT pg_terminate_backend($1)", [pid]);
        await assert.rejects(store.session("k").appendMessage(msg("k2", "killed")));
        assert.equal(await stored("k2"), 0);
        const { rows } = await pool.query(`SELECT ids FROM ${log} WHERE session_id = 'k' ORDER BY seq`);
        assert.deepEqual(
          rows.map((r) => r.ids),
          ['["k0"]'],
        );
        // No two-phase commit, so no prepared transaction of this writer left on any node (only its own: CI's contract
        // job beside this file commits in two phases on the same cluster).
        assert.deepEqual(await twoPhase(), []);
        const { rows: left } = await pool.query("SELECT result FROM run_command_on_all_nodes($1)", [
          `SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'citus\\_%\\_${pid}\\_%'`,
        ]);
        assert.deepEqual(
          left.map((r) => r.result),
          left.map(() => "0"),
        );
      } finally {
        await end();
      }
    });

    test("a search across sessions fans out: one scan every shard runs with its LIMIT, then statements of one task", async () => {
      await emptyAll(pool, t);
      const store = new PostgresStore(pool, options);
      for (const name of ["a", "b", "c"]) {
        await store.session(name).appendMessage(msg(`${name}0`, `fan out ${name}`));
        await store.session(name).appendMessage(msg(`${name}1`, `fan out again ${name}`), `${name}0`);
      }
      for (const match of ["any", "all"] as const) {
        const hits = await store.searchMessages("fan out", { match, context: 1 });
        assert.deepEqual(new Set(hits.map((h) => h.sessionId)), new Set(["a", "b", "c"]), match);
        const plans = await plansOf(async (s) => void (await s.searchMessages("fan out", { match })));
        const scans = plans.filter((plan) => taskCounts(plan).some((n) => n > 1));
        assert.equal(scans.length, 1, plans.join("\n---\n"));
        assert.match(scans[0]!, /Limit/, scans[0]);
        for (const plan of plans.filter((p) => !scans.includes(p)))
          assert.ok(
            taskCounts(plan).every((n) => n === 1),
            plan,
          );
      }
    });

    test("a search across sessions sends one statement per shard of the matches' sessions, not per session", async () => {
      await emptyAll(pool, t);
      const store = new PostgresStore(pool, options);
      const names = Array.from({ length: 90 }, (_, i) => `wide${i}`);
      for (const name of names) await store.session(name).appendMessage(msg(`${name}m`, `wide fan ${name}`));
      const { rows } = await pool.query(
        "SELECT count(DISTINCT get_shard_id_for_distribution_column($1::regclass, s))::int AS n FROM unnest($2::text[]) s",
        [t.heads, names],
      );
      const shards = rows[0].n as number;
      assert.ok(shards < names.length, `${shards} shards`);
      for (const match of ["any", "all"] as const) {
        const hits = await store.searchMessages("wide fan", { match, limit: 2 });
        assert.equal(hits.length, 2, match);
        const plans = await plansOf(
          async (s) => void (await s.searchMessages("wide fan", { match, limit: 2 })),
        );
        // The scan, one statement per shard for the candidates' rows, and the page's statements per session of
        // its two hits (its text, marks and context): bounded by shards and the page, not by the 90 sessions.
        assert.ok(
          plans.length <= 1 + shards + 2 * 4,
          `${match}: ${plans.length} statements, ${shards} shards`,
        );
        for (const plan of plans.filter((p) => taskCounts(p).every((n) => n === 1)))
          assert.doesNotMatch(plan, /Distributed Subplan/, plan);
      }
    });
  });
}
