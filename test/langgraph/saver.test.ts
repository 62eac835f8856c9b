// The LangGraph checkpointer on SQLite (src/langgraph/, sql/checkpoints/): the owner boundary, a keyed owner's rows
// sealed on disk, deleteThread + purge leaving no byte, the channel values' delta chains rebuilt exactly (forks
// included, from a process without the writer's cache), a step's stored bytes flat as the thread grows, and an
// emptied channel stored as no row.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type Checkpoint, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { randomKeyring } from "../../src/testing/privacy/keyless-writes.js";
import { rejectsWithCode } from "../../src/testing/runner.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-langgraph-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `saver-${++n}.db`);

const SECRET = "zqxlanggraphsecretq";
const meta = { source: "loop" as const, step: 0, parents: {} };

/** A checkpoint whose messages channel holds `messages`, at `version`. */
function step(
  messages: unknown[],
  version: number,
): { checkpoint: Checkpoint; versions: Record<string, number> } {
  const checkpoint = emptyCheckpoint();
  checkpoint.id = uuid6(-1);
  checkpoint.channel_values = { messages };
  checkpoint.channel_versions = { messages: version };
  return { checkpoint, versions: { messages: version } };
}

const thread = (thread_id: string, user_id?: string, checkpoint_id?: string): RunnableConfig => ({
  configurable: { thread_id, ...(user_id ? { user_id } : {}), ...(checkpoint_id ? { checkpoint_id } : {}) },
});

test("a thread is a session of its owner: another owner's config neither reads nor writes it", async () => {
  const store = new SqliteStore(file());
  try {
    const saver = new AgentSessionSaver(store, { ownerKey: "user_id" });
    const { checkpoint, versions } = step(["hi"], 1);
    const config = await saver.put(thread("t-alice", "alice"), checkpoint, meta, versions);
    const info = await store.registry.get("t-alice");
    assert.equal(info?.owner, "alice");
    assert.equal(info?.source, "langgraph");
    assert.deepEqual((await saver.getTuple(thread("t-alice", "alice")))?.checkpoint.channel_values, {
      messages: ["hi"],
    });
    // Bob, and a config naming no owner, see nothing of it, by id or across threads.
    assert.equal(await saver.getTuple(thread("t-alice", "bob")), undefined);
    assert.equal(await saver.getTuple(thread("t-alice")), undefined);
    assert.equal(
      await saver.getTuple({ configurable: { ...config.configurable, user_id: "bob" } }),
      undefined,
    );
    const listed = async (user_id?: string) => {
      const ids: string[] = [];
      for await (const t of saver.list({ configurable: user_id ? { user_id } : {} } as RunnableConfig))
        ids.push(t.checkpoint.id);
      return ids;
    };
    assert.deepEqual(await listed("alice"), [checkpoint.id]);
    assert.deepEqual(await listed("bob"), []);
    assert.deepEqual(await listed(), []);
    // Writes through another owner's config are refused, and write nothing.
    const other = step(["bob's words"], 2);
    await rejectsWithCode(
      saver.put(thread("t-alice", "bob"), other.checkpoint, meta, other.versions),
      "CONFLICT",
    );
    await rejectsWithCode(
      saver.putWrites({ configurable: { ...config.configurable, user_id: "bob" } }, [["x", 1]], "t"),
      "CONFLICT",
    );
    assert.equal((await store.checkpoints.footprint("t-alice")).rows, 1);
    await rejectsWithCode(
      saver
        .put(thread("t-x", "alice"), checkpoint, meta, { messages: 1 })
        .then(() => saver.getTuple({ configurable: { thread_id: "t-x", user_id: 7 } })),
      "INVALID_ARGUMENT",
    );
  } finally {
    await store.close();
  }
});

test("a keyed owner's checkpoints, values and writes are sealed: no clear byte in the file", async () => {
  const path = file();
  const store = new SqliteStore(path, { keyring: randomKeyring(["alice"]) });
  try {
    const saver = new AgentSessionSaver(store, { ownerKey: "user_id" });
    let config = thread("t-sealed", "alice");
    const messages: string[] = [];
    for (let i = 0; i < 5; i++) {
      messages.push(`${SECRET} message ${i} ${"padding ".repeat(20)}`);
      const { checkpoint, versions } = step([...messages], i + 1);
      config = {
        configurable: {
          ...(await saver.put(config, checkpoint, { ...meta, note: SECRET } as never, versions)).configurable,
          user_id: "alice",
        },
      };
      await saver.putWrites(config, [["messages", SECRET]], "task");
    }
    const tuple = await saver.getTuple(config);
    assert.deepEqual(tuple?.checkpoint.channel_values, { messages });
    assert.deepEqual(tuple?.pendingWrites, [["task", "messages", SECRET]]);
  } finally {
    await store.close();
  }
  assert.equal(readFileSync(path).includes(SECRET), false, "the secret is in the file in clear");
});

test("deleteThread erases the thread as a session; after the purge no byte of it is in the file", async () => {
  const path = file();
  const store = new SqliteStore(path);
  try {
    const saver = new AgentSessionSaver(store);
    const messages = Array.from({ length: 20 }, (_, i) => `${SECRET} ${i}`);
    const { checkpoint, versions } = step(messages, 1);
    const config = await saver.put(thread("t-gone"), checkpoint, meta, versions);
    await saver.putWrites(config, [["messages", SECRET]], "task");
    await saver.deleteThread("t-gone");
    assert.equal(await store.registry.get("t-gone"), null);
    assert.equal(await saver.getTuple(thread("t-gone")), undefined);
    assert.equal((await store.checkpoints.footprint("t-gone")).rows, 0);
    assert.equal((await store.purge()).complete, true);
  } finally {
    await store.close();
  }
  assert.equal(readFileSync(path).includes(SECRET), false);
});

test("channel values stored as prefix deltas rebuild exactly, forks and a fresh process included", async () => {
  const path = file();
  const writer = new SqliteStore(path);
  const expected = new Map<string, string[]>();
  try {
    const saver = new AgentSessionSaver(writer);
    const messages: string[] = [];
    let config = thread("t-chain");
    const ids: string[] = [];
    // Versions as LangGraph makes them with this saver (getNextVersion): a fork's never equal the main branch's.
    const versionAt: number[] = [];
    let version: number | undefined;
    for (let i = 0; i < 40; i++) {
      messages.push(`message ${i}: ${"some words ".repeat(i % 7)}${"é漢🙂".repeat(i % 3)}`);
      version = saver.getNextVersion(version);
      versionAt.push(version);
      const { checkpoint, versions } = step([...messages], version);
      config = await saver.put(config, checkpoint, meta, versions);
      expected.set(checkpoint.id, [...messages]);
      ids.push(checkpoint.id);
    }
    // A fork from checkpoint 10: its own messages, the same version numbers as the main branch's.
    let fork = thread("t-chain", undefined, ids[10]);
    const forked = (expected.get(ids[10] as string) ?? []).slice();
    let forkVersion = versionAt[10];
    for (let i = 0; i < 15; i++) {
      forked.push(`fork ${i} ${"other words ".repeat(i % 5)}`);
      forkVersion = saver.getNextVersion(forkVersion);
      const { checkpoint, versions } = step([...forked], forkVersion);
      fork = await saver.put(fork, checkpoint, meta, versions);
      expected.set(checkpoint.id, [...forked]);
    }
    // A value rewritten (not grown) starts over in full, and reads back whole.
    const rewritten = ["a new list"];
    const { checkpoint, versions } = step(rewritten, saver.getNextVersion(version));
    await saver.put(config, checkpoint, meta, versions);
    expected.set(checkpoint.id, rewritten);
    const fp = await writer.checkpoints.footprint("t-chain");
    const full = [...expected.values()].reduce((sum, m) => sum + JSON.stringify(m).length, 0);
    assert.ok(fp.bytes < full / 3, `stored ${fp.bytes} bytes for ${full} bytes of values`);
  } finally {
    await writer.close();
  }
  // Another process (no cache of what was written) reads every checkpoint back exactly.
  const reader = new SqliteStore(path);
  try {
    const saver = new AgentSessionSaver(reader);
    let count = 0;
    for await (const t of saver.list(thread("t-chain"))) {
      assert.deepEqual(t.checkpoint.channel_values, { messages: expected.get(t.checkpoint.id) });
      count++;
    }
    assert.equal(count, expected.size);
    for (const [id, messages] of expected) {
      const t = await saver.getTuple(thread("t-chain", undefined, id));
      assert.deepEqual(t?.checkpoint.channel_values, { messages });
    }
  } finally {
    await reader.close();
  }
});

test("a step's stored bytes stay flat as the messages list grows", async () => {
  const store = new SqliteStore(file());
  try {
    const saver = new AgentSessionSaver(store);
    const messages: string[] = [];
    let config = thread("t-flat");
    const added: number[] = [];
    let before = 0;
    for (let i = 0; i < 600; i++) {
      messages.push(`message ${i} ${"with words ".repeat(10)}`);
      const { checkpoint, versions } = step([...messages], i + 1);
      config = await saver.put(config, checkpoint, meta, versions);
      const { bytes } = await store.checkpoints.footprint("t-flat");
      added.push(bytes - before);
      before = bytes;
    }
    const raw = JSON.stringify(messages).length;
    // Steps 500-599 (past the chain's full rows) store about what one message adds, as steps 100-199 did.
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
    const early = median(added.slice(100, 200));
    const late = median(added.slice(500, 600));
    assert.ok(late <= early * 1.2, `a late step stored ${late} bytes, an early one ${early}`);
    assert.ok(before < raw * 5, `${before} bytes stored for ${raw} bytes of messages`);
  } finally {
    await store.close();
  }
});

test("a channel emptied at a version stores no value row and reads back absent, as an empty blob does", async () => {
  const path = file();
  const store = new SqliteStore(path);
  const first = emptyCheckpoint();
  first.id = uuid6(-1);
  first.channel_values = { messages: ["a"], scratch: "x" };
  first.channel_versions = { messages: 1, scratch: 1 };
  const second = emptyCheckpoint();
  second.id = uuid6(-1);
  second.channel_values = { messages: ["a", "b"] };
  second.channel_versions = { messages: 2, scratch: 2 };
  try {
    const saver = new AgentSessionSaver(store);
    const config = await saver.put(thread("t-empty"), first, meta, { messages: 1, scratch: 1 });
    await saver.put(config, second, meta, { messages: 2, scratch: 2 });
  } finally {
    await store.close();
  }
  const db = new (loadBetterSqlite3())(path);
  try {
    const rows = db
      .prepare("SELECT channel, version FROM agent_checkpoint_values ORDER BY channel, version")
      .all();
    assert.deepEqual(rows, [
      { channel: "messages", version: "1" },
      { channel: "messages", version: "2" },
      { channel: "scratch", version: "1" },
    ]);
  } finally {
    db.close();
  }
  // A process without the writer's cache reads both checkpoints as they were put.
  const reader = new SqliteStore(path);
  try {
    const saver = new AgentSessionSaver(reader);
    const at = async (id: string) => (await saver.getTuple(thread("t-empty", undefined, id)))?.checkpoint;
    assert.deepEqual((await at(first.id))?.channel_values, { messages: ["a"], scratch: "x" });
    const read = await at(second.id);
    assert.deepEqual(read?.channel_values, { messages: ["a", "b"] });
    assert.deepEqual(read?.channel_versions, { messages: 2, scratch: 2 });
  } finally {
    await reader.close();
  }
});
