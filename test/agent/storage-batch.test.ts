// A whole-state write (save, create, fork) on a store-backed storage appends its messages in steps of WRITE_BATCH,
// one transaction each (it was one transaction per message: a 2,000-message fork took 12.6 s on Postgres), the
// header with the last: a new session that dies part-way never loads as if it were whole, and delete() removes it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SQLiteSessionStorage } from "../../src/agent/index.js";
import { WRITE_BATCH } from "../../src/agent/storage/store-writes.js";
import type { StepWrite } from "../../src/contract/step.js";
import { sampleState } from "../../src/testing/storage/fixtures.js";

const many = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `m${i}`, role: "user", content: `message ${i}`, createdAt: 1 }));

/** Counts the store's step writes, failing the one numbered `failAt` (1-based) when given. */
function spy(storage: SQLiteSessionStorage, failAt?: number): StepWrite[] {
  const steps: StepWrite[] = [];
  const store = storage.sqlite as unknown as { writeStep(step: StepWrite): Promise<void> };
  const original = store.writeStep.bind(store);
  store.writeStep = async (step) => {
    steps.push(step);
    if (steps.length === failAt) throw new Error("killed");
    return original(step);
  };
  return steps;
}

describe("store-backed storages write a whole state in batches", () => {
  it("a save of 2.5 batches is three step writes, the header with the last", async () => {
    const storage = new SQLiteSessionStorage();
    try {
      const steps = spy(storage);
      const n = WRITE_BATCH * 2 + WRITE_BATCH / 2;
      const state = sampleState({ messages: many(n) as never });
      await storage.save(state);
      assert.deepEqual(
        steps.map((step) => [step.messages.length, step.block !== undefined]),
        [
          [WRITE_BATCH, false],
          [WRITE_BATCH, false],
          [WRITE_BATCH / 2, true],
        ],
      );
      const loaded = await storage.load(state.id);
      assert.equal(loaded?.messages.length, n);
      assert.equal(loaded?.messages.at(-1)?.id, `m${n - 1}`);
      assert.equal(loaded?.usage.inputTokens, 150);
    } finally {
      await storage.close();
    }
  });

  it("a new session that dies after its first batch never loads as if whole; it lists, and delete() removes it", async () => {
    const storage = new SQLiteSessionStorage();
    try {
      spy(storage, 2);
      const state = sampleState({ messages: many(WRITE_BATCH + 1) as never });
      // Not create(): it removes its row on an error it sees; a killed process sees none.
      await assert.rejects(storage.save(state), /killed/);
      assert.deepEqual(await storage.list(), [state.id]);
      assert.equal(
        await storage.load(state.id),
        undefined,
        "a thousand of its messages would pass for all of them",
      );
      await storage.delete(state.id);
      assert.deepEqual(await storage.list(), []);
      await storage.create({ ...state, messages: many(3) as never });
      assert.equal((await storage.load(state.id))?.messages.length, 3);
    } finally {
      await storage.close();
    }
  });
});
