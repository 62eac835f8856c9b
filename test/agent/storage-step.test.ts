import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import pg from "pg";
import { type AgentMessage, StoreSessionStorage } from "../../src/agent/index.js";
import { headerKey } from "../../src/agent/storage/mapping.js";
import type { AgentCapableStore } from "../../src/agent/storage/store-writes.js";
import type { SessionError } from "../../src/errors.js";
import { MemoryStore, SessionManager } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { entry, sampleState } from "../../src/testing/storage/fixtures.js";
import { PG_URL } from "../fixtures/postgres-db.js";
import { serverSkip } from "./helpers/servers.js";

// An append is one transaction (store.writeStep): a failure anywhere in it leaves no half-saved step.
const pgSkip = await serverSkip("PostgreSQL", "127.0.0.1", 5432);
const schema = `agent_step_t${process.pid}`;
const admin = pgSkip === false ? new pg.Pool({ connectionString: PG_URL, max: 1 }) : undefined;
after(async () => {
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
});

const backends: { name: string; skip: string | false; open: () => Promise<AgentCapableStore> }[] = [
  { name: "MemoryStore", skip: false, open: async () => new MemoryStore() },
  { name: "SqliteStore", skip: false, open: async () => new SqliteStore(":memory:") },
  {
    name: "PostgresStore",
    skip: pgSkip,
    open: async () => PostgresStore.open(PG_URL, { schema }),
  },
];

const message = (id: string, text: string) =>
  ({ id, role: "assistant", content: text, createdAt: 5 }) as AgentMessage;

for (const backend of backends) {
  describe(`agent steps on ${backend.name}`, { skip: backend.skip }, () => {
    it("a conflict on the second message of a step rolls back the first, the header and the counters", async () => {
      const store = await backend.open();
      const storage = new StoreSessionStorage(store);
      const state = sampleState();
      await storage.save(state);
      const before = await storage.load(state.id);
      const info = await store.registry.get(state.id);
      const stored = state.messages.at(-1)!;
      await assert.rejects(
        storage.appendMessages(
          state.id,
          [message("new-1", "a"), { ...stored, content: "changed" } as AgentMessage],
          {
            updatedAt: state.updatedAt + 1000,
            usage: [entry(9)],
            metadata: { title: "renamed" },
          },
        ),
        { code: "CONFLICT" },
      );
      assert.deepEqual(await storage.load(state.id), before);
      assert.equal((await store.registry.get(state.id))?.input_tokens, info?.input_tokens);
      assert.equal(await store.session(state.id).getMessage("new-1"), null);
      await store.close();
    });

    it("an append to an unknown session writes nothing (NOT_FOUND)", async () => {
      const store = await backend.open();
      const storage = new StoreSessionStorage(store);
      await assert.rejects(storage.appendMessages("nobody", [message("x", "a")], { updatedAt: 1 }), {
        code: "NOT_FOUND",
      });
      assert.deepEqual(await store.session("nobody").getHistory(), []);
      await store.close();
    });

    it("a one-message step: another session's row is NOT_FOUND, a different duplicate CONFLICT, both writing nothing", async () => {
      const store = await backend.open();
      const storage = new StoreSessionStorage(store);
      await store.registry.create({ id: "foreign", name: "foreign", source: "cli" });
      await assert.rejects(storage.appendMessages("foreign", [message("x", "a")], { updatedAt: 1 }), {
        code: "NOT_FOUND",
      });
      assert.deepEqual(await store.session("foreign").getHistory(), []);
      const state = sampleState();
      await storage.save(state);
      const info = await store.registry.get(state.id);
      const stored = state.messages.at(-1)!;
      const changed = { ...stored, content: "changed" } as AgentMessage;
      await assert.rejects(storage.appendMessages(state.id, [changed], { updatedAt: 2, usage: [entry(9)] }), {
        code: "CONFLICT",
      });
      assert.equal((await store.registry.get(state.id))?.input_tokens, info?.input_tokens);
      // The same message again (a retried append) is accepted, as in a multi-message step.
      await storage.appendMessages(state.id, [stored], { updatedAt: 3 });
      assert.equal((await storage.load(state.id))?.messages.length, state.messages.length);
      await store.close();
    });

    it("two processes appending the same steps at once: each step is stored once, both succeed", async () => {
      const stores = [await backend.open(), await backend.open()];
      // Two in-memory SQLite stores share nothing: only a server backend has two writers of one session.
      if (backend.name !== "PostgresStore") {
        await Promise.all(stores.map((s) => s.close()));
        return;
      }
      const [a, b] = stores.map((store) => new StoreSessionStorage(store));
      const state = { ...sampleState(), id: `race-${process.pid}` };
      await a!.save(state);
      for (let i = 0; i < 20; i++) {
        const step = [
          message(`r${i}`, "call"),
          { ...message(`r${i}-t`, "result"), role: "tool" } as AgentMessage,
        ];
        const step1 = i % 2 === 0 ? [step[0]!] : step;
        await Promise.all(
          [a, b].map((s) => s!.appendMessages(state.id, step1, { updatedAt: i, usage: [entry(1)] })),
        );
      }
      const loaded = await a!.load(state.id);
      assert.equal(loaded?.messages.length, state.messages.length + 30);
      await Promise.all(stores.map((s) => s.close()));
    });

    it("a plain append leaves the header alone; load returns the step's time; SessionManager.delete drops the header", async () => {
      const store = await backend.open();
      const storage = new StoreSessionStorage(store);
      const state = sampleState();
      await storage.save(state);
      const header = await store.blocks.getBlock(headerKey(state.id));
      await storage.appendMessages(state.id, [message("n1", "hi")], {
        updatedAt: state.updatedAt + 7,
        usage: [entry(3)],
      });
      assert.equal(await store.blocks.getBlock(headerKey(state.id)), header);
      const loaded = await storage.load(state.id);
      assert.equal(loaded?.updatedAt, state.updatedAt + 7);
      assert.equal(loaded?.messages.length, state.messages.length + 1);
      assert.equal(loaded?.usage.entries.length, state.usage.entries.length + 1);
      await new SessionManager(store).delete(state.id);
      assert.equal(await store.blocks.getBlock(headerKey(state.id)), null);
      await store.close();
    });
  });
}

// The registry refuses usage that would carry a total out of range (src/store/usage-totals.ts): a step carrying
// such usage is refused whole, on every store, whichever way it is written (Postgres: one statement for one
// message, a transaction for two, the header and the counters for none; the MemoryStore checks before writing).
for (const backend of backends) {
  it(`${backend.name}: a step whose usage would carry a total out of range writes nothing`, {
    skip: backend.skip,
  }, async () => {
    const store = await backend.open();
    const storage = new StoreSessionStorage(store);
    const state = sampleState();
    await storage.save(state);
    const edge = Number.MAX_SAFE_INTEGER - (await store.registry.get(state.id))!.input_tokens;
    await store.registry.addUsage(state.id, { inputTokens: edge, outputTokens: 0, cost: 0 });
    const before = await storage.load(state.id);
    const row = await store.registry.get(state.id);
    const steps = [[message("n1", "a")], [message("n1", "a"), message("n2", "b")], []];
    for (const [i, added] of steps.entries()) {
      await assert.rejects(
        storage.appendMessages(state.id, added, {
          updatedAt: state.updatedAt + 1000,
          usage: [entry(9)],
          ...(i === 1 ? { metadata: { title: "renamed" } } : {}),
        }),
        (error: SessionError) => {
          assert.equal(error.code, "INVALID_ARGUMENT");
          assert.equal(error.issues?.[0]?.path, "inputTokens", error.message);
          return true;
        },
      );
      assert.deepEqual(await storage.load(state.id), before, `${added.length} message(s): nothing stored`);
      assert.deepEqual(await store.registry.get(state.id), row);
    }
    // Usage that fits still goes in.
    await storage.appendMessages(state.id, [message("n1", "a")], { updatedAt: 1, usage: [entry(9, 0, 1)] });
    assert.equal((await store.registry.get(state.id))?.output_tokens, (row?.output_tokens ?? 0) + 1);
    await store.close();
  });
}
