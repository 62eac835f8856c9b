// explainCompaction(): the plan, or why a compaction would store nothing (the reason and the numbers).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { createCompactFunction } from "../../src/utils/index.js";

const backends: Array<[string, () => SessionStore]> = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];

async function filled(store: SessionStore, id: string, count: number, words = 3): Promise<Session> {
  const session = Session.create(store)
    .forSession(id)
    .onCompaction(createCompactFunction({ summarize: async () => "short", tailTokenBudget: 200 }));
  for (let i = 0; i < count; i++) {
    const text = Array.from({ length: words }, (_, w) => `word${w}`).join(" ");
    await session.appendMessage({
      id: `m${i}`,
      role: i % 2 ? "assistant" : "user",
      parts: [{ type: "text", text }],
    });
  }
  return session;
}

for (const [name, create] of backends) {
  describe(`explainCompaction (${name})`, () => {
    test("too few messages: the head and the minimal tail take them all", async () => {
      const skip = await (await filled(create(), "few", 4)).explainCompaction();
      assert.ok(!skip.compacts);
      assert.equal(skip.reason, "too-few-messages");
      assert.deepEqual([skip.messages, skip.protectHead, skip.minTailMessages], [4, 3, 2]);
      assert.match(
        skip.message,
        /4 messages are no more than the 3 first ones kept \(protectHead\) and the 2 last/,
      );
    });

    test("the tail budget covers the rest: the estimate and the budget are named", async () => {
      const session = await filled(create(), "short", 10);
      const skip = await session.explainCompaction();
      assert.ok(!skip.compacts);
      assert.equal(skip.reason, "tail-covers-history");
      assert.equal(skip.tailTokenBudget, 200);
      assert.ok(skip.tokensBefore > 0 && skip.tokensBefore <= 200, String(skip.tokensBefore));
      assert.equal(await session.planCompaction(), null);
    });

    test("a history past the tail budget: the plan itself", async () => {
      const session = await filled(create(), "long", 12, 60);
      const plan = await session.explainCompaction();
      assert.ok(plan.compacts);
      assert.deepEqual(plan, await session.planCompaction());
      assert.equal(plan.fromMessageId, "m3");
    });

    test("a compaction function without settings: the reason is the function", async () => {
      const session = Session.create(create()).forSession("custom");
      session.onCompaction(Object.assign(async () => null, { plan: async () => null }));
      await session.appendMessage({ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] });
      const skip = await session.explainCompaction();
      assert.ok(!skip.compacts);
      assert.equal(skip.reason, "function");
      assert.equal(skip.messages, 1);
    });
  });
}
