// Kept streams on a Citus cluster (docs/POSTGRES.md, "The layout"): a session's stream head and chunks are sharded
// by its id with its messages, and every statement a stream's writer and readers send names the session, so the
// coordinator routes each to the session's node (one task, no subplan): a start, an append of chunks (the head
// locked, then the chunks, one transaction committed on that node alone), a heartbeat, a read, an end, a drop and a
// session's erasure. The sweep of idle streams is the one write across sessions, and fans out to every shard.
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { PostgresStore } from "../src/postgres/index.js";
import { msg } from "../src/testing/contract/harness.js";
import { CITUS_URL, citusSchema } from "./fixtures/citus-db.js";
import { taskCounts } from "./fixtures/citus-plans.js";

const cluster = await citusSchema("streams");
const skip = cluster ? false : "no Citus cluster";

const chunks = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ seq: from + i, chunk: `chunk ${from + i}` }));

/**
 * What `run` sends to a store on the cluster's schema through a connection of its own: each statement on the stream
 * tables with its plan as the coordinator explains it, and the two-phase-commit records the connection left.
 */
async function sentAndPlanned(run: (store: PostgresStore) => Promise<void>) {
  const { pool, schema } = cluster!;
  const client = new pg.Client({ connectionString: CITUS_URL });
  await client.connect();
  const sent: { text: string; values: unknown[] }[] = [];
  try {
    const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
    const gids = async () =>
      (
        await pool.query<{ gid: string }>("SELECT gid FROM pg_dist_transaction WHERE gid LIKE $1", [
          `citus\\_%\\_${pid}\\_%`,
        ])
      ).rows.map((r) => r.gid);
    const before = new Set(await gids());
    const recording = {
      query: (text: string, values?: unknown[]) => {
        sent.push({ text, values: values ?? [] });
        return client.query(text, values);
      },
    };
    await run(new PostgresStore(recording as never, { schema, distributed: true, prepare: false }));
    const twoPhase = (await gids()).filter((gid) => !before.has(gid));
    const statements: { text: string; plan: string }[] = [];
    for (const { text, values } of sent) {
      if (!/agent_stream/.test(text) || !/^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b/i.test(text)) continue;
      const explainer = await pool.connect();
      try {
        // Explained in a transaction rolled back: EXPLAIN plans a write without running it, but Citus runs subplans.
        await explainer.query("BEGIN");
        const { rows } = await explainer.query(`EXPLAIN (COSTS OFF) ${text}`, values);
        statements.push({
          text,
          plan: rows.map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]).join("\n"),
        });
      } finally {
        await explainer.query("ROLLBACK");
        explainer.release();
      }
    }
    return { sent: sent.map((s) => s.text), statements, twoPhase };
  } finally {
    await client.end();
  }
}

test("every statement of one session's stream runs on the session's node", { skip }, async () => {
  await cluster!.reset();
  const store = cluster!.store();
  await store.session("s").appendMessage(msg("m", "a question"));
  const { sent, statements, twoPhase } = await sentAndPlanned(async (s) => {
    await s.streams.start("s", "x", 1);
    assert.equal(await s.streams.append("s", "x", chunks(0, 3), 2), true);
    assert.equal(await s.streams.append("s", "x", [], 3), true); // a heartbeat
    assert.deepEqual((await s.streams.read("s", "x", 0, 10))?.chunks, chunks(1, 2));
    await s.streams.end("s", "x", null, 4);
    assert.equal(await s.streams.append("s", "x", chunks(3, 1), 5), false); // ended: refused, nothing written
    assert.equal((await s.streams.head("s"))?.state, "done");
    await s.streams.drop("s", "x");
  });
  // start (head, clear), append (lock, chunks), heartbeat (lock), read, end, refused append (lock), head, drop.
  assert.equal(statements.length, 10, sent.join("\n---\n"));
  for (const { text, plan } of statements) {
    assert.deepEqual(taskCounts(plan), [1], `${text}\n${plan}`);
    assert.doesNotMatch(plan, /Distributed Subplan|pull to coordinator|repartition/, `${text}\n${plan}`);
  }
  // The append's transaction wrote on one node: committed there in one phase, no two-phase-commit record.
  assert.deepEqual(twoPhase, []);
  assert.equal(await store.streams.countChunks(), 0);
});

test("a session's erasure deletes its stream on its node; the sweep of idle streams fans out", {
  skip,
}, async () => {
  await cluster!.reset();
  const store = cluster!.store();
  for (const id of ["a", "b", "c"]) {
    await store.session(id).appendMessage(msg(`${id}1`, "words"));
    await store.streams.start(id, "x", 10);
    await store.streams.append(id, "x", chunks(0, 2), 10);
  }
  await store.streams.append("c", "x", chunks(2, 1), 50);
  const erased = await sentAndPlanned(async (s) => void (await s.registry.erase?.("a")));
  const forget = erased.statements.filter(({ text }) => /DELETE FROM \S*agent_stream/.test(text));
  assert.equal(forget.length, 1, erased.sent.join("\n---\n"));
  assert.deepEqual(taskCounts(forget[0]!.plan), [1], forget[0]!.plan);
  assert.equal(await store.streams.head("a"), null);
  // Idle since before 20: b's stream goes; c's (written at 50) stays, with its chunks.
  const swept = await sentAndPlanned(async (s) => assert.equal(await s.streams.expire(20), 1));
  const [sweep] = swept.statements;
  assert.ok(sweep && taskCounts(sweep.plan).some((n) => n > 1), sweep?.plan);
  assert.equal(await store.streams.head("b"), null);
  assert.deepEqual((await store.streams.read("c", "x", -1, 10))?.chunks, chunks(0, 3));
  assert.equal(await store.streams.countChunks(), 3);
});
