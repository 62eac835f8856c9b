// LangGraph's checkpoint conformance suite on PGlite (in process): one PGlite, a schema per checkpointer. Skipped
// with AGENT_SESSION_PGLITE=off (.ci/run's Node 24 run, whose first run ran it).
import type { PGlite } from "@electric-sql/pglite";
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { it } from "vitest";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { newPGlite } from "../fixtures/pglite.js";
import { pgliteSwitchedOff } from "../fixtures/postgres-db.js";

const off = pgliteSwitchedOff();
if (off) {
  console.log(`# skipping the conformance suite on PGlite: ${off}`);
  it.skip(`PGlite: ${off}`, () => {});
} else {
  let db: PGlite | undefined;
  let n = 0;
  const stores = new WeakMap<AgentSessionSaver, PostgresStore>();
  validate({
    checkpointerName: "agent-session PGlite",
    beforeAll: async () => {
      db = await newPGlite();
    },
    // Starting PGlite (its WebAssembly) passes the suite's default 10 s on a loaded machine.
    beforeAllTimeout: 120_000,
    createCheckpointer: async () => {
      const store = await PostgresStore.open(db as PGlite, { schema: `cp_${++n}` });
      const saver = new AgentSessionSaver(store);
      stores.set(saver, store);
      return saver;
    },
    destroyCheckpointer: async (saver) => stores.get(saver as AgentSessionSaver)?.close(),
    afterAll: async () => db?.close(),
  });
}
