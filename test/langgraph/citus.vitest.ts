// LangGraph's checkpoint conformance suite on a Citus cluster (AGENT_SESSION_CITUS_URL, ../shared/citus/): one
// distributed schema (distributing takes seconds), emptied for each checkpointer, dropped after; skipped with the
// reason without a cluster (an error under CI=true) or with AGENT_SESSION_CITUS=off.
import { validate } from "@langchain/langgraph-checkpoint-validation";
import pg from "pg";
import { it } from "vitest";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { CITUS_URL, citusUnavailable } from "../fixtures/citus-db.js";

const why = await citusUnavailable();
if (why) {
  console.log(`# skipping the conformance suite on Citus: ${why}`);
  it.skip(`Citus: ${why}`, () => {});
} else {
  const schema = `lg_saver_${process.pid}`;
  const options = { schema, distributed: true };
  const pool = new pg.Pool({ connectionString: CITUS_URL, max: 4, options: "-c citus.shard_count=4" });
  const stores = new WeakMap<AgentSessionSaver, PostgresStore>();
  validate({
    checkpointerName: "agent-session Citus",
    beforeAll: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await (await PostgresStore.open(pool, options)).close();
    },
    beforeAllTimeout: 120_000,
    createCheckpointer: async () => {
      // Every table of the schema but its version emptied: each checkpointer starts from no thread, as a fresh database would.
      const { rows } = await pool.query<{ t: string }>(
        "SELECT quote_ident(table_name) AS t FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name <> 'agent_session_schema'",
        [schema],
      );
      await pool.query(rows.map((r) => `DELETE FROM ${schema}.${r.t};`).join("\n"));
      // Opened once above (the schema distributed); a store made after it finds the layout ready.
      const store = new PostgresStore(pool, options);
      const saver = new AgentSessionSaver(store);
      stores.set(saver, store);
      return saver;
    },
    destroyCheckpointer: async (saver) => stores.get(saver as AgentSessionSaver)?.close(),
    afterAll: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    },
  });
}
