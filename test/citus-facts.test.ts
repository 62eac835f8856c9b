// Facts on a Citus cluster (docs/FACTS.md, "Citus"): the fact tables are distributed by scope key and co-located, so
// one owner's or one session's list, search and lookup run on one shard, an active path's recall too; a session's
// erasure reaches the facts it sourced in every scope, on every shard. The storage contract there covers the rest
// (test/citus-contract.test.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { FactScope } from "../src/contract/facts.js";
import { learnFacts } from "../src/facts/learn.js";
import type { PostgresStore } from "../src/postgres/index.js";
import { msg } from "../src/testing/contract/harness.js";
import { sayingExtractor } from "./facts/helpers.js";
import { citusSchema } from "./fixtures/citus-db.js";
import { plansOf, taskCounts } from "./fixtures/citus-plans.js";

const cluster = await citusSchema("facts");
const skip = cluster ? false : "no Citus cluster";
const FACT_TABLES = /agent_facts|agent_fact_sources/;

const source = (sessionId: string, messageId: string) => ({ sessionId, messageId });

/** Alice's sessions a1, a2 with facts of hers, bob's b1 with his, and session s1's own (no owner). */
async function seed(store: PostgresStore): Promise<void> {
  for (const [id, owner] of [
    ["a1", "alice"],
    ["a2", "alice"],
    ["b1", "bob"],
    ["s1", null],
  ] as const) {
    await store.registry.create({ id, name: id, owner });
    await store.session(id).appendMessage(msg(`${id}-m`, `words of ${id}`));
  }
  const add = (scope: FactScope, id: string, text: string, sources: ReturnType<typeof source>[]) =>
    store.facts.add(scope, [{ id, text, observedAt: 1, sources, producer: "function:t" }]);
  await add({ owner: "alice" }, "boston", "Alice moved to Boston.", [source("a1", "a1-m")]);
  await add({ owner: "alice" }, "tea", "Alice drinks tea in Boston.", [
    source("a1", "a1-m"),
    source("a2", "a2-m"),
  ]);
  await add({ owner: "bob" }, "paris", "Bob lives in Paris near Boston.", [source("b1", "b1-m")]);
  await add({ sessionId: "s1" }, "own", "The session talks of Boston.", [source("s1", "s1-m")]);
}

test("one owner's fact list, search, lookup and active-path recall each run on one shard", {
  skip,
}, async () => {
  await cluster!.reset();
  await seed(cluster!.store());
  const alice = { owner: "alice" };
  const store = cluster!.store();
  assert.deepEqual(
    (await store.facts.search(alice, "boston")).map((h) => h.fact.id).sort(),
    ["boston", "tea"],
    "the search finds alice's facts only",
  );
  const runs: [string, (s: PostgresStore) => Promise<unknown>][] = [
    ["search", (s) => s.facts.search(alice, "boston")],
    ["search of a session's facts", (s) => s.facts.search({ sessionId: "s1" }, "boston")],
    ["list", (s) => s.facts.list(alice)],
    ["get", (s) => s.facts.get(alice, "tea")],
    [
      "active-path search",
      (s) => s.facts.search(alice, "boston", { sourceSession: "a2", sourcesIn: ["a2-m"] }),
    ],
    ["sourced list", (s) => s.facts.list(alice, { sourceSession: "a1" })],
  ];
  for (const [name, run] of runs) {
    const plans = await plansOf(
      cluster!.pool,
      { schema: cluster!.schema, distributed: true },
      async (s) => {
        await run(s);
      },
      FACT_TABLES,
    );
    assert.ok(plans.length > 0, name);
    for (const plan of plans)
      assert.ok(
        taskCounts(plan).every((n) => n === 1),
        `${name}:\n${plan}`,
      );
    console.log(`${name}: ${plans.length} statement(s) of the fact tables, each on one shard`);
  }
});

test("a session's erasure reaches the facts it sourced in every scope, on every shard", {
  skip,
}, async () => {
  await cluster!.reset();
  const store = cluster!.store();
  await seed(store);
  await store.facts.add({ owner: "alice" }, [
    {
      id: "later",
      text: "Alice moved on.",
      observedAt: 2,
      sources: [source("a2", "a2-m")],
      producer: "function:t",
    },
  ]);
  await store.facts.supersede({ owner: "alice" }, "boston", "later");
  await store.registry.erase?.("a2");
  // "tea" named a2 and goes; "later" too, so "boston", which it superseded, is current again.
  assert.deepEqual(
    (await store.facts.list({ owner: "alice" }, { status: ["current", "superseded"] })).facts.map((f) => [
      f.id,
      f.status,
    ]),
    [["boston", "current"]],
  );
  assert.equal((await store.facts.list({ owner: "bob" })).facts.length, 1, "bob's facts stay");
  const { rows } = await cluster!.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "${cluster!.schema}".agent_fact_sources WHERE session_id = 'a2'`,
  );
  assert.equal(rows[0]?.n, 0);
});

test("a learner on the cluster: its mark and lease are routed with the session, its facts with the owner", {
  skip,
}, async () => {
  await cluster!.reset();
  const store = cluster!.store();
  await store.registry.create({ id: "l1", name: "l1", owner: "lea" });
  for (const [i, text] of ["I live in Oslo", "ok", "I like skiing", "ok"].entries()) {
    await store.session("l1").appendMessage({
      id: `m${i}`,
      role: i % 2 ? "assistant" : "user",
      parts: [{ type: "text", text }],
    });
  }
  const options = { schema: cluster!.schema, distributed: true };
  const plans = await plansOf(
    cluster!.pool,
    options,
    async (s) => {
      const report = await learnFacts(s, { extractor: sayingExtractor().extract, sessionIds: ["l1"] });
      assert.equal(report.added, 2);
    },
    /agent_facts|agent_fact_sources|agent_learn_marks/,
  );
  for (const plan of plans)
    assert.ok(
      taskCounts(plan).every((n) => n === 1),
      plan,
    );
  assert.deepEqual(
    (await store.facts.search({ owner: "lea" }, "Oslo")).map((h) => h.fact.text),
    ["The user says: I live in Oslo"],
  );
  assert.equal((await store.facts.mark("l1"))?.holder, null);
});
