// LangGraph's checkpoint conformance suite on SQLite, on one driver per run (its ~720 cases are not repeated per
// variant): better-sqlite3, and node:sqlite on Node >= 24 (.ci/run's second run); AGENT_SESSION_SQLITE_DRIVER names
// one instead.
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { sqliteTarget } from "./targets.js";

const named = process.env.AGENT_SESSION_SQLITE_DRIVER;
const driver =
  named === "node:sqlite" || (named === undefined && Number(process.versions.node.split(".")[0]) >= 24)
    ? "node:sqlite"
    : "better-sqlite3";
const target = sqliteTarget(driver);

validate({
  checkpointerName: `agent-session SQLite (${driver})`,
  createCheckpointer: target.create,
  destroyCheckpointer: target.destroy,
  afterAll: target.end,
});
