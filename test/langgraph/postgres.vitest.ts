// LangGraph's checkpoint conformance suite on PostgreSQL: a database of its own on the test server, dropped after;
// skipped with the reason when the server is unreachable (an error under CI=true).
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { it } from "vitest";
import { postgresTarget, unreachable } from "./targets.js";

const url = process.env.AGENT_SESSION_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const why =
  process.env.AGENT_SESSION_POSTGRES === "off" ? "AGENT_SESSION_POSTGRES=off" : await unreachable(url);

if (why) {
  console.log(`# skipping the conformance suite on PostgreSQL: ${why}`);
  it.skip(`PostgreSQL: ${why}`, () => {});
} else {
  const target = postgresTarget(url);
  validate({
    checkpointerName: "agent-session PostgreSQL",
    beforeAll: target.begin,
    createCheckpointer: target.create,
    destroyCheckpointer: target.destroy,
    afterAll: target.end,
  });
}
