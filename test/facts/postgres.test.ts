// Two learners on one Postgres session (two stores on the test server, as two processes): no duplicate facts.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { learnFacts } from "../../src/facts/learn.js";
import type { ExtractInput } from "../../src/facts/types.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { dropSchema, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { sayingExtractor } from "./helpers.js";

const skip = await postgresUnavailable();
const pool = skip ? undefined : testPool(4);
after(async () => {
  if (pool) await pool.end();
});

test("two learners started at once on one Postgres session: one learns, the other is busy", {
  skip: skip ?? false,
}, async () => {
  const schema = "facts_learner_two";
  const db = pool!;
  await dropSchema(db, schema);
  const a = await PostgresStore.open(db, { schema });
  const b = await PostgresStore.open(db, { schema });
  try {
    await a.registry.create({ id: "s", name: "s", owner: "alice" });
    const provider = a.session("s");
    for (const [i, text] of ["I live in Paris", "ok", "I like tea", "ok"].entries()) {
      await provider.appendMessage({
        id: `m${i}`,
        role: i % 2 ? "assistant" : "user",
        parts: [{ type: "text", text }],
      });
    }
    const slow = (extract: (input: ExtractInput) => Promise<unknown>) => async (input: ExtractInput) => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return extract(input) as never;
    };
    const one = sayingExtractor();
    const two = sayingExtractor();
    const [ra, rb] = await Promise.all([
      learnFacts(a, { extractor: slow(one.extract), sessionIds: ["s"] }),
      learnFacts(b, { extractor: slow(two.extract), sessionIds: ["s"] }),
    ]);
    assert.equal(ra.added + rb.added, 2);
    assert.equal(ra.busy.length + rb.busy.length, 1, "exactly one of them found the session held");
    assert.equal(one.calls.length + two.calls.length, 1);
    const facts = (await b.facts.list({ owner: "alice" })).facts;
    assert.equal(facts.length, 2);
    assert.equal((await a.facts.mark("s"))?.holder, null);
  } finally {
    await a.close();
    await b.close();
    await dropSchema(db, schema);
  }
});
