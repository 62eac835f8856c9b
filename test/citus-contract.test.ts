// The whole storage contract on a Citus cluster (docs/POSTGRES.md, "Past one server"): the store opened on the
// coordinator with `distributed: true`. One distributed schema for the whole file, emptied between tests:
// distributing tables costs seconds. It takes minutes, so it runs when asked for (AGENT_SESSION_CITUS_CONTRACT=1:
// .ci/run runs this file so once, beside its two full `npm test` runs), in a file of its own.
import { after, describe, it, test } from "node:test";
import { PostgresStore } from "../src/postgres/index.js";
import { tableNames } from "../src/sql/engines/postgres/tables.js";
import { runProviderContract } from "../src/testing/index.js";
import { CITUS_URL, citusPool, citusUnavailable, emptyAll } from "./fixtures/citus-db.js";
import { dropSchema } from "./fixtures/postgres-db.js";

/**
 * node:test, injected into the contract suite as a user's runner would be; tests whose name matches the pattern in
 * AGENT_SESSION_CITUS_SKIP are skipped (node:test's own name pattern cannot leave out one test of a suite).
 */
const skipping = process.env.AGENT_SESSION_CITUS_SKIP;
const runner = {
  describe,
  it: (name: string, body: () => Promise<void>) =>
    skipping && new RegExp(skipping).test(name)
      ? it(name, { skip: `matches AGENT_SESSION_CITUS_SKIP=${skipping}` }, body)
      : it(name, body),
};

// Per process, so two runs at once (two checkouts, one cluster) never drop each other's tables.
const SCHEMA = `agent_session_citus_contract_${process.pid}`;
const asked = process.env.AGENT_SESSION_CITUS_CONTRACT === "1";
const unavailable = asked
  ? await citusUnavailable()
  : "it runs with AGENT_SESSION_CITUS_CONTRACT=1 (minutes; .ci/run runs it once, beside its full runs)";

if (unavailable) {
  console.log(`Skipping the storage contract on Citus: ${unavailable}`);
  test("citus storage contract", { skip: unavailable }, () => undefined);
} else {
  const pool = citusPool();
  const options = { schema: SCHEMA, distributed: true };
  const t = tableNames(options);
  await dropSchema(pool, SCHEMA);
  await (await PostgresStore.open(pool, options)).close();
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  });

  runProviderContract(runner, {
    name: `citus (${CITUS_URL})`,
    create: async (policy) => {
      await emptyAll(pool, t);
      return new PostgresStore(pool, { ...options, ...policy });
    },
    reopen: async (store) => {
      await store.close();
      return PostgresStore.open(pool, options);
    },
  });
}
