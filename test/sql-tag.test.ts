import { SqliteStore } from "../src/sqlite/store.js";
import { runProviderContract } from "./contract/index.js";
import { sqlTagAgent } from "./helpers/sql-tag.js";

runProviderContract({
  name: "sql-tag adapter over better-sqlite3",
  create: async (policy) => new SqliteStore(sqlTagAgent(), policy),
});
