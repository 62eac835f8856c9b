import assert from "node:assert/strict";
import { describe, it, test } from "node:test";
import type { SessionMessage } from "../src/contract/message.js";
import { DURABLE_OBJECT_VALUE_LIMIT } from "../src/sql/engines/sqlite/sql-tag-driver.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { bytesOf } from "../src/testing/contract/media-harness.js";
import { runProviderContract } from "../src/testing/index.js";
import { pathVariant } from "./helpers/contract-variants.js";
import { sqlTagAgent } from "./helpers/sql-tag.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

pathVariant("sql-tag adapter over better-sqlite3", () =>
  runProviderContract(runner, {
    name: "sql-tag adapter over better-sqlite3",
    create: async (policy) => new SqliteStore(sqlTagAgent(), policy),
  }),
);

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

test("each attachment chunk's row stays within the limit, its hash and index included", async () => {
  // SQLite's length limit, which a Durable Object sets to 2 MB, covers a whole row, not only each value in it.
  const agent = sqlTagAgent();
  const rowLimited = {
    sql(strings: TemplateStringsArray, ...values: unknown[]) {
      const bytes = values.reduce<number>(
        (sum, v) =>
          sum + (typeof v === "string" ? Buffer.byteLength(v) : v instanceof Uint8Array ? v.byteLength : 8),
        0,
      );
      if (/^\s*INSERT/i.test(strings[0] ?? "") && bytes > DURABLE_OBJECT_VALUE_LIMIT) {
        throw new Error(`row too big: ${bytes} bytes`);
      }
      return agent.sql(strings, ...values);
    },
  };
  const store = new SqliteStore(rowLimited);
  // Right at the limit, where one chunk of exactly the limit plus its hash was one row too big.
  for (const size of [DURABLE_OBJECT_VALUE_LIMIT - 10, DURABLE_OBJECT_VALUE_LIMIT, 2_100_000]) {
    const url = `data:image/png;base64,${bytesOf(size, 3).toString("base64")}`;
    const message = { id: `i${size}`, role: "user", parts: [{ type: "file", mediaType: "image/png", url }] };
    await store.session("a").appendMessage(message as SessionMessage);
    assert.equal(JSON.stringify(await store.session("a").getMessage(message.id)), JSON.stringify(message));
  }
  await store.close();
});

test("a tag whose engine returns integers as BigInt works like one returning numbers", async () => {
  const agent = sqlTagAgent();
  agent.db.defaultSafeIntegers(true);
  const store = new SqliteStore(agent);
  const s = store.session("a");
  const text = (id: string, body: string): SessionMessage => ({
    id,
    role: "user",
    parts: [{ type: "text", text: body }],
  });
  await s.appendMessage(text("u1", "hello world"));
  await s.appendMessage(text("u2", "second"));
  await s.appendMessage(text("u3", "a branch"), "u1");
  assert.deepEqual(
    (await s.getHistory()).map((m) => m.id),
    ["u1", "u3"],
  );
  assert.deepEqual(
    (await s.getBranches("u1")).map((m) => m.id),
    ["u2", "u3"],
  );
  assert.deepEqual(
    (await s.searchMessages("hello")).map((m) => m.id),
    ["u1"],
  );
  assert.equal(await s.getPathLength(), 2);
  await store.close();
});

test("a tag that answers with a Promise is a STORAGE error naming it", () => {
  assert.throws(() => new SqliteStore({ sql: async () => [] }), { code: "STORAGE" });
});
