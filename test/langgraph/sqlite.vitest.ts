// LangGraph's checkpoint conformance suite on SQLite (better-sqlite3; node:sqlite where the runtime has it and
// AGENT_SESSION_SQLITE_DRIVER=node:sqlite, as .ci/run's Node 24 run sets).
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { sqliteTarget } from "./targets.js";

const driver = process.env.AGENT_SESSION_SQLITE_DRIVER === "node:sqlite" ? "node:sqlite" : "better-sqlite3";
const target = sqliteTarget(driver);

validate({
  checkpointerName: `agent-session SQLite (${driver})`,
  createCheckpointer: target.create,
  destroyCheckpointer: target.destroy,
  afterAll: target.end,
});
