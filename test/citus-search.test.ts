// Store-wide search on a Citus cluster gives the single server's answers (docs/POSTGRES.md, "Searches across
// sessions"): the same writes to a store on one PostgreSQL server and to one distributed on the cluster, then the
// same searches across sessions (ranked recall and all-words, whole store and active branches) must return the same
// hits in the same order with the same scores. The writes spread over every shard, with branches and messages
// without text (which the candidate statement walks past, one statement per shard on the cluster).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { SearchOptions } from "../src/contract/search.js";
import { PostgresStore } from "../src/postgres/index.js";
import { msg } from "../src/testing/contract/harness.js";
import { citusPool, citusUnavailable } from "./fixtures/citus-db.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

const SCHEMA = `agent_session_citus_search_${process.pid}`;
const unavailable = (await citusUnavailable()) ?? (await postgresUnavailable());

const WORDS = ["amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor"];
/** Deterministic text of `n`: four words of WORDS, or no searchable text every seventh message. */
const text = (n: number) =>
  n % 7 === 3
    ? "👍"
    : [1, 2, 3, 4].map((k) => WORDS[(((n + 1) * 2654435761 * k) % 101) % WORDS.length]).join(" ");

if (unavailable) {
  console.log(`Skipping the Citus search differential: ${unavailable}`);
  test("citus search differential", { skip: unavailable }, () => undefined);
} else {
  const pools = { single: testPool(), cluster: citusPool() };
  for (const pool of Object.values(pools)) await dropSchema(pool, SCHEMA);
  const stores = {
    single: await PostgresStore.open(pools.single, { schema: SCHEMA }),
    cluster: await PostgresStore.open(pools.cluster, { schema: SCHEMA, distributed: true }),
  };
  after(async () => {
    for (const [side, pool] of Object.entries(pools)) {
      await stores[side as keyof typeof stores].close();
      await dropSchema(pool, SCHEMA);
      await pool.end();
    }
  });

  test("store-wide search on the cluster returns the single server's hits, order and scores", async () => {
    // The same writes, one at a time, so both stores number them alike: 24 sessions of 8 messages, every fourth
    // session with a branch off its second message (its active path then leaves the first branch behind).
    for (const store of Object.values(stores)) {
      let n = 0;
      for (let s = 0; s < 24; s++) {
        const chat = store.session(`s${s}`);
        for (let i = 0; i < 8; i++)
          await chat.appendMessage(msg(`m${i}`, text(n++), i % 2 ? "assistant" : "user"));
        if (s % 4 === 0)
          for (let i = 0; i < 3; i++)
            await chat.appendMessage(msg(`b${i}`, text(n++)), i ? `b${i - 1}` : "m1");
      }
    }
    const searches: [string, SearchOptions][] = [];
    for (const q of ["amber birch", "cobalt", "delta ember", "garnet harbor"])
      for (const options of [
        {},
        { match: "all" },
        { branch: "active" },
        { roles: ["assistant"] },
      ] as SearchOptions[])
        searches.push([q, { ...options, limit: 15 }]);
    for (const [q, options] of searches) {
      const [single, cluster] = await Promise.all(
        [stores.single, stores.cluster].map(async (store) =>
          (await store.searchMessages(q, options)).map(
            (h) => `${h.sessionId}/${h.id} ${h.rank} ${h.score.toFixed(9)}`,
          ),
        ),
      );
      assert.ok(single && single.length > 0, `${q} ${JSON.stringify(options)} finds something`);
      assert.deepEqual(cluster, single, `${q} ${JSON.stringify(options)}`);
    }
  });
}
