// Two processes writing one LangGraph thread at once (#89): each keeps its own checkpoints (LangGraph's ids are
// unique), never a merged or lost one, and every channel value reads back exactly from either side, though both
// grow delta chains from the same parent. Two stores over one SQLite file, and two over one Postgres schema.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver, type CheckpointerStore } from "../../src/langgraph/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { inOwnSchema, postgresUnavailable } from "../fixtures/postgres-db.js";

const meta = { source: "loop" as const, step: 0, parents: {} };
const STEPS = 12;
const thread = (checkpoint_id?: string): RunnableConfig => ({
  configurable: { thread_id: "t-shared", user_id: "alice", ...(checkpoint_id ? { checkpoint_id } : {}) },
});

/** Writes `STEPS` checkpoints of a growing messages list from `from`, as one process of a graph would. */
async function branch(saver: AgentSessionSaver, from: RunnableConfig, name: string, start: string[]) {
  const written = new Map<string, string[]>();
  const messages = [...start];
  let config = from;
  let version = 1;
  for (let i = 0; i < STEPS; i++) {
    messages.push(`${name} says ${i}: ${"words ".repeat(i % 4)}`);
    version = saver.getNextVersion(version);
    const checkpoint = emptyCheckpoint();
    checkpoint.id = uuid6(-1);
    checkpoint.channel_values = { messages: [...messages] };
    checkpoint.channel_versions = { messages: version };
    // A graph passes the run's configurable on (its owner key among it); put answers the checkpoint's ids only.
    const stored = await saver.put(config, checkpoint, meta, { messages: version });
    config = { configurable: { ...stored.configurable, user_id: "alice" } };
    await saver.putWrites(config, [["messages", `${name} pending ${i}`]], `task-${name}-${i}`);
    written.set(checkpoint.id, [...messages]);
  }
  return written;
}

/** Both stores write a branch of the same parent at once; each reads both branches back whole. */
async function bothKept(first: CheckpointerStore, second: CheckpointerStore): Promise<void> {
  const a = new AgentSessionSaver(first, { ownerKey: "user_id", messagesChannel: false });
  const b = new AgentSessionSaver(second, { ownerKey: "user_id", messagesChannel: false });
  const root = emptyCheckpoint();
  root.id = uuid6(-1);
  root.channel_values = { messages: ["the question"] };
  root.channel_versions = { messages: 1 };
  const parent = thread((await a.put(thread(), root, meta, { messages: 1 })).configurable?.checkpoint_id);
  const [fromA, fromB] = await Promise.all([
    branch(a, parent, "a", ["the question"]),
    branch(b, thread(root.id), "b", ["the question"]),
  ]);
  const expected = new Map([...fromA, ...fromB, [root.id, ["the question"]]]);
  assert.equal(expected.size, 2 * STEPS + 1, "every checkpoint id is its own");
  for (const saver of [a, b]) {
    const seen = new Map<string, unknown>();
    for await (const tuple of saver.list(thread())) {
      seen.set(tuple.checkpoint.id, tuple.checkpoint.channel_values.messages);
      const pending = tuple.pendingWrites?.map(([, , value]) => value) ?? [];
      const mine = fromA.has(tuple.checkpoint.id) ? "a" : fromB.has(tuple.checkpoint.id) ? "b" : null;
      if (mine) assert.equal(pending.length, 1, "each checkpoint keeps its own pending write");
      if (mine) assert.match(String(pending[0]), new RegExp(`^${mine} pending `));
    }
    assert.deepEqual(seen, expected);
  }
}

test("SQLite: two stores writing one thread at once keep both branches, each value exact", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-langgraph-concurrent-"));
  const path = join(dir, "shared.db");
  const first = new SqliteStore(path);
  const second = new SqliteStore(path);
  try {
    await bothKept(first, second);
  } finally {
    await first.close();
    await second.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const reason = await postgresUnavailable();
if (reason) console.log(`Skipping the LangGraph saver's concurrency on Postgres: ${reason}`);
test("Postgres: two stores writing one thread at once keep both branches, each value exact", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema(
    "saver_concurrent",
    async (pool, schema) => {
      const first = await PostgresStore.open(pool, { schema });
      const second = await PostgresStore.open(pool, { schema });
      await bothKept(first, second);
      await first.close();
      await second.close();
    },
    4,
  );
});
