// The same conformance suite on LangGraph's own SqliteSaver and PostgresSaver, for the comparison docs/LANGGRAPH.md
// states: run only with AGENT_SESSION_LANGGRAPH_THEIRS=on (it measures their savers, not this package).

import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { validate } from "@langchain/langgraph-checkpoint-validation";
import pg from "pg";
import { it } from "vitest";
import { unreachable } from "./targets.js";

const url = process.env.AGENT_SESSION_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

if (process.env.AGENT_SESSION_LANGGRAPH_THEIRS !== "on") {
  it.skip("LangGraph's own savers: AGENT_SESSION_LANGGRAPH_THEIRS=on runs the suite on them", () => {});
} else {
  validate({
    checkpointerName: "@langchain/langgraph-checkpoint-sqlite",
    createCheckpointer: () => SqliteSaver.fromConnString(":memory:"),
  });
  const why = await unreachable(url);
  if (why) it.skip(`PostgresSaver: ${why}`, () => {});
  else {
    const database = `lg_theirs_${process.pid}`;
    const at = new URL(url);
    at.pathname = `/${database}`;
    let n = 0;
    const admin = async (sql: string) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(sql);
      await c.end();
    };
    validate({
      checkpointerName: "@langchain/langgraph-checkpoint-postgres",
      beforeAll: () => admin(`CREATE DATABASE ${database}`),
      createCheckpointer: async () => {
        const saver = PostgresSaver.fromConnString(at.href, { schema: `theirs_${++n}` });
        await saver.setup();
        return saver;
      },
      destroyCheckpointer: (saver) => (saver as PostgresSaver).end(),
      afterAll: () => admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
    });
  }
}
