import assert from "node:assert/strict";
import { test } from "node:test";
import { SqliteStore } from "../src/sqlite/store.js";
import type { SessionMessage } from "../src/types.js";
import { bytesOf } from "./contract/attachments.spec.js";
import { runProviderContract } from "./contract/index.js";
import { sqlTagAgent } from "./helpers/sql-tag.js";

runProviderContract({
  name: "sql-tag adapter over better-sqlite3",
  create: async (policy) => new SqliteStore(sqlTagAgent(), policy),
});

test("a payload over a Durable Object's value limit is stored in chunks within the limit", async () => {
  const agent = sqlTagAgent();
  const store = new SqliteStore(agent);
  const url = `data:image/png;base64,${bytesOf(5_000_000, 1).toString("base64")}`;
  const message = { id: "big", role: "user", parts: [{ type: "file", mediaType: "image/png", url }] };
  await store.session("a").appendMessage(message as SessionMessage);
  const largest = agent.db
    .prepare("SELECT MAX(length(data)) AS n, COUNT(*) AS c FROM agent_attachments")
    .get() as {
    n: number;
    c: number;
  };
  assert.ok(largest.n <= store.driver.maxValueBytes, `largest value ${largest.n} bytes`);
  assert.equal(largest.c, Math.ceil(5_000_000 / store.driver.maxValueBytes));
  const back = await store.session("a").getMessage("big");
  assert.equal(JSON.stringify(back), JSON.stringify(message));
  await store.close();
});
