// A read of one checkpoint takes a channel value this process wrote or read from memory when its row is still there
// under the tag it knows (sql/checkpoints/reads.ts), and reads the chain otherwise: after another process deleted
// the thread and wrote it again under the same versions, and after a fork from an earlier checkpoint.
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
const latest: RunnableConfig = { configurable: { thread_id: "t-held" } };

/** Puts `lists` in turn as versions 1, 2, … of the messages channel; answers each checkpoint's config. */
async function write(
  saver: AgentSessionSaver,
  lists: string[][],
  from = latest,
  first = 1,
): Promise<RunnableConfig[]> {
  const configs: RunnableConfig[] = [];
  let config = from;
  for (const [i, messages] of lists.entries()) {
    const checkpoint = emptyCheckpoint();
    checkpoint.id = uuid6(-1);
    checkpoint.channel_values = { messages };
    checkpoint.channel_versions = { messages: first + i };
    config = await saver.put(config, checkpoint, meta, { messages: first + i });
    await saver.putWrites(config, [["messages", messages.at(-1)]], `task-${i}`);
    configs.push(config);
  }
  return configs;
}

const grown = (name: string, n: number) =>
  Array.from({ length: n }, (_, i) =>
    Array.from({ length: i + 1 }, (_, j) => `${name} message ${j}: ${"word ".repeat(20)}`),
  );

async function heldOrRead(first: CheckpointerStore, second: CheckpointerStore): Promise<void> {
  const a = new AgentSessionSaver(first, { messagesChannel: false });
  const b = new AgentSessionSaver(second, { messagesChannel: false });
  const mine = grown("a", 6);
  const configs = await write(a, mine);
  const read = async (saver: AgentSessionSaver, config = latest) =>
    (await saver.getTuple(config))?.checkpoint.channel_values.messages;
  assert.deepEqual(await read(a, configs[2]), mine[2], "an earlier version, from its chain");
  assert.deepEqual(await read(a), mine[5], "the value a read last, from memory");
  // Another process deletes the thread and writes it again under the same versions, other values.
  await b.deleteThread("t-held");
  const theirs = grown("b", 6);
  const at = await write(b, theirs);
  assert.deepEqual(await read(a), theirs[5], "the row another process wrote under the held version");
  const tuple = await a.getTuple(latest);
  assert.deepEqual(
    tuple?.pendingWrites?.map(([, , value]) => value),
    [theirs[5]!.at(-1)],
    "the pending write refers to the row that is there",
  );
  // A fork of a's own from b's third checkpoint: the held value is the fork's, the branch it left is read.
  const forked = [...theirs[2]!, "a fork"];
  const [fork] = await write(a, [forked], at[2], 100);
  assert.deepEqual(await read(a, fork), forked);
  assert.deepEqual(await read(b), forked, "the fork is the newest checkpoint");
  assert.deepEqual(await read(a, at[5]), theirs[5]);
}

test("SQLite: a read takes the value this process holds only while its row is the one there", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-langgraph-held-"));
  const path = join(dir, "shared.db");
  const first = new SqliteStore(path);
  const second = new SqliteStore(path);
  try {
    await heldOrRead(first, second);
  } finally {
    await first.close();
    await second.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const reason = await postgresUnavailable();
if (reason) console.log(`Skipping the held values on Postgres: ${reason}`);
test("Postgres: a read takes the value this process holds only while its row is the one there", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema(
    "saver_held",
    async (pool, schema) => {
      const first = await PostgresStore.open(pool, { schema });
      const second = await PostgresStore.open(pool, { schema });
      await heldOrRead(first, second);
      await first.close();
      await second.close();
    },
    4,
  );
});
