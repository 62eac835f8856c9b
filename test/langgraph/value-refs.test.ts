// The graph's input value kept as a reference to the value that took its message (src/sql/checkpoints/value-refs.ts),
// on SQLite, PGlite, Postgres and Citus: in a graph's turns every `__start__` row becomes a reference to the next
// checkpoint's messages row, and another process (no cache) reads every checkpoint's values and pending writes
// (the input task's write refers to the `__start__` value) back as the serializer wrote them, for a keyed owner
// too (the row's own bytes sealed); an input row another process wrote again under a new tag stays as it is.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import {
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  JsonPlusSerializer,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import type { CheckpointerStore } from "../../src/langgraph/saver.js";
import { PostgresStore } from "../../src/postgres/index.js";
import {
  findPiece,
  parseValueRef,
  valueRefType,
  withoutPiece,
  withPiece,
} from "../../src/sql/checkpoints/value-refs.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { randomKeyring } from "../../src/testing/privacy/keyless-writes.js";
import { citusSchema } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { inOwnSchema, pgliteSwitchedOff, postgresUnavailable } from "../fixtures/postgres-db.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-value-refs-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// The thread's `__start__` rows: their stored type, whether sealed, their bytes' length.
type Rows = (thread: string) => Promise<{ type: string; sealed: boolean; bytes: number }[]>;

const enc = (text: string) => new TextEncoder().encode(text);
const words = (n: number, seed: string) =>
  Array.from({ length: n }, (_, i) => `${seed}${(i * 7919) % 1000}`).join(" ");

test("an input row's piece in another row, and its reference's tag, round trip", () => {
  const message = `{"lc":1,"type":"constructor","kwargs":{"content":"${words(30, "w")}","response_metadata":{}}}`;
  const input = enc(`{"messages":[${message}]}`);
  const other = enc(`,${message.slice(0, -2)},"id":"6c0ac039-1487-4488-b31c-99917366c93b"}}]`);
  const piece = findPiece(input, other);
  assert.ok(piece);
  assert.ok(piece.length >= message.length - 2, JSON.stringify(piece));
  const kept = withoutPiece(input, piece);
  assert.equal(new TextDecoder().decode(kept), '{"messages":[}}]}');
  assert.deepEqual(withPiece(kept, piece, other), input);
  const ref = { ...piece, channel: "a,b|c%", version: "2.5", tag: "t1" };
  const parsed = parseValueRef(valueRefType("json|x|r", ref));
  assert.deepEqual(parsed, { type: "json|x|r", ...ref });
  assert.equal(parseValueRef("json|z1"), null);
  assert.throws(() => parseValueRef("json|1,2|v1"), { code: "STORAGE" });
  // Too little in common, or a piece that does not fit: none.
  assert.equal(findPiece(input, enc(words(30, "q"))), null);
  assert.equal(withPiece(kept, { ...piece, offset: other.length }, other), null);
});

// Records every channel value a put stores and every pending write, as the serializer wrote them.
class Recording extends AgentSessionSaver {
  readonly values = new Map<string, Uint8Array>();
  readonly writes = new Map<string, Uint8Array>();
  private readonly serializer = new JsonPlusSerializer();

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    for (const [channel, version] of Object.entries(newVersions))
      if (channel in checkpoint.channel_values)
        this.values.set(
          `${channel} ${version}`,
          (await this.serializer.dumpsTyped(checkpoint.channel_values[channel]))[1],
        );
    return super.put(config, checkpoint, metadata, newVersions);
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    for (const [i, [channel, value]] of writes.entries())
      this.writes.set(
        `${config.configurable?.checkpoint_id} ${taskId} ${i} ${channel}`,
        (await this.serializer.dumpsTyped(value))[1],
      );
    return super.putWrites(config, writes, taskId);
  }
}

const TURNS = 4;

const opts = { ownerKey: "user_id" };
const THREAD = "t-inputs";

async function graphTurns(
  store: CheckpointerStore,
  other: CheckpointerStore,
  rows: Rows,
  owner?: string,
  sealed = owner !== undefined,
): Promise<Recording> {
  const saver = new Recording(store, opts);
  const replies = Array.from({ length: TURNS }, (_, i) => words(40, `r${i}x`));
  const model = new FakeListChatModel({ responses: replies });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: saver });
  const thread = { configurable: { thread_id: THREAD, ...(owner ? { user_id: owner } : {}) } };
  for (let t = 0; t < TURNS; t++)
    await graph.invoke({ messages: [new HumanMessage(words(40, `u${t}y`))] }, thread);
  // The graph goes on in a process that read the thread, and its state holds every message.
  const state = await graph.getState(thread);
  assert.equal((state.values.messages as unknown[]).length, TURNS * 2);
  await readBack(saver, other, rows, owner, sealed);
  return saver;
}

// Every input row is a reference (sealed for a keyed owner), and another process reads every checkpoint back exact:
// each value named, and each pending write.
async function readBack(
  saver: Recording,
  other: CheckpointerStore,
  rows: Rows,
  owner?: string,
  sealed = owner !== undefined,
): Promise<void> {
  const stored = await rows(THREAD);
  assert.equal(stored.length, TURNS);
  assert.equal(stored.filter((r) => r.type.endsWith("|v1")).length, TURNS, JSON.stringify(stored));
  for (const r of stored) {
    assert.equal(r.sealed, sealed);
    if (!sealed) assert.ok(r.bytes < 40, JSON.stringify(r));
  }
  const thread = { configurable: { thread_id: THREAD, ...(owner ? { user_id: owner } : {}) } };
  let values = 0;
  let writes = 0;
  for await (const tuple of new AgentSessionSaver(other, opts).list(thread)) {
    const id = String(tuple.config.configurable?.checkpoint_id);
    const read = await other.checkpoints.get(THREAD, "", id);
    assert.ok(read);
    for (const v of read.values) {
      const want = saver.values.get(`${v.channel} ${v.version}`);
      assert.ok(want, `${v.channel} ${v.version}`);
      assert.equal(v.type, "json");
      assert.deepEqual(new Uint8Array(v.data ?? []), new Uint8Array(want), `${v.channel} ${v.version}`);
      values++;
    }
    for (const w of read.writes) {
      const key = `${id} ${w.taskId} ${w.idx} ${w.channel}`;
      assert.deepEqual(new Uint8Array(w.data), new Uint8Array(saver.writes.get(key) ?? []), key);
      writes++;
    }
  }
  assert.ok(values > TURNS * 3);
  assert.equal(writes, saver.writes.size);
}

// Another process writes the input checkpoint again under a new tag before the writer's next put: the writer's
// reference does not hold, the row stays as the other process wrote it, and reads back exact.
async function rewritten(store: CheckpointerStore, other: CheckpointerStore, rows: Rows): Promise<void> {
  const writer = new AgentSessionSaver(store);
  const reader = new AgentSessionSaver(other);
  const thread = { configurable: { thread_id: "t-again" } };
  const human = new HumanMessage({ content: words(40, "h"), id: "m-1" });
  const input: Checkpoint = {
    v: 4,
    id: "1f0a0000-0000-6000-8000-000000000001",
    ts: new Date(0).toISOString(),
    channel_values: { __start__: { messages: [human] } },
    channel_versions: { __start__: 1 },
    versions_seen: {},
  };
  const meta = { source: "input" as const, step: -1, parents: {} };
  const at = await writer.put(thread, input, meta, { __start__: 1 });
  await reader.deleteThread("t-again");
  await reader.put(thread, input, meta, { __start__: 1 });
  const next: Checkpoint = {
    ...input,
    id: "1f0a0000-0000-6000-8000-000000000002",
    channel_values: { messages: [human] },
    channel_versions: { __start__: 2, messages: 2 },
  };
  await writer.put(at, next, { ...meta, source: "loop", step: 0 }, { __start__: 2, messages: 2 });
  const stored = await rows("t-again");
  assert.equal(stored.length, 1);
  assert.ok(!stored[0]?.type.endsWith("|v1"), JSON.stringify(stored));
  const tuple = await new AgentSessionSaver(other).getTuple({
    configurable: { thread_id: "t-again", checkpoint_id: input.id },
  });
  assert.deepEqual(tuple?.checkpoint.channel_values, { __start__: { messages: [human] } });
}

// A delta of the input that went in full (its base row written again by another process meanwhile) keeps the tag
// it planned: a reference made for the delta's suffix must not be applied to the full row, and the value reads back
// exact.
async function fellBack(store: CheckpointerStore, other: CheckpointerStore): Promise<void> {
  const writer = new AgentSessionSaver(store);
  const reader = new AgentSessionSaver(other);
  const thread = { configurable: { thread_id: "t-full" } };
  const meta = { source: "input" as const, step: -1, parents: {} };
  const first = new HumanMessage({ content: words(40, "a"), id: "m-1" });
  const second = new HumanMessage({ content: words(40, "b"), id: "m-2" });
  const at = (
    n: number,
    channel_values: Record<string, unknown>,
    channel_versions: Record<string, number>,
  ) => ({
    v: 4,
    id: `1f0a0000-0000-6000-8000-00000000001${n}`,
    ts: new Date(0).toISOString(),
    channel_values,
    channel_versions,
    versions_seen: {},
  });
  const one = at(1, { __start__: { messages: [first] } }, { __start__: 1 });
  let config = await writer.put(thread, one, meta, { __start__: 1 });
  await reader.deleteThread("t-full");
  await reader.put(thread, one, meta, { __start__: 1 });
  const two = at(2, { __start__: { messages: [second] } }, { __start__: 2 });
  config = await writer.put(config, two, meta, { __start__: 2 });
  const three = at(3, { messages: [second] }, { __start__: 3, messages: 3 });
  await writer.put(config, three, { ...meta, source: "loop", step: 0 }, { __start__: 3, messages: 3 });
  const tuple = await new AgentSessionSaver(other).getTuple({
    configurable: { thread_id: "t-full", checkpoint_id: two.id },
  });
  assert.deepEqual(tuple?.checkpoint.channel_values, { __start__: { messages: [second] } });
}

const sqliteRows =
  (file: string): Rows =>
  async (thread) => {
    const { loadBetterSqlite3 } = await import("../../src/sql/engines/sqlite/better-sqlite3.js");
    const db = new (loadBetterSqlite3())(file, { readonly: true });
    try {
      const rows = db
        .prepare(
          `SELECT type, sealed, length(data) AS bytes FROM agent_checkpoint_values
          WHERE session_id = ? AND channel = '__start__' ORDER BY version`,
        )
        .all(thread) as { type: string; sealed: number; bytes: number }[];
      return rows.map((r) => ({ ...r, sealed: r.sealed === 1 }));
    } finally {
      db.close();
    }
  };

for (const keyed of [false, true]) {
  test(`SQLite: input rows go as references to the values that took them, ${keyed ? "keyed" : "in clear"}`, async () => {
    const file = join(dir, `inputs-${keyed}.db`);
    const keyring = keyed ? { keyring: randomKeyring(["alice"]) } : {};
    const store = new SqliteStore(file, keyring);
    const other = new SqliteStore(file, keyring);
    try {
      await graphTurns(store, other, sqliteRows(file), keyed ? "alice" : undefined);
      if (!keyed) await rewritten(store, other, sqliteRows(file));
      if (!keyed) await fellBack(store, other);
    } finally {
      await store.close();
      await other.close();
    }
  });
}

test("SQLite: input rows kept as references are sealed by sealClear and read back exact", async () => {
  const file = join(dir, "inputs-seal.db");
  const store = new SqliteStore(file);
  const saver = await graphTurns(store, store, sqliteRows(file), "alice", false).catch(async (error) => {
    await store.close();
    throw error;
  });
  await store.close();
  const keyring = randomKeyring(["alice"]);
  const keyed = new SqliteStore(file, { keyring });
  const other = new SqliteStore(file, { keyring });
  try {
    await keyed.rekey("alice", { sealClear: true });
    await readBack(saver, other, sqliteRows(file), "alice", true);
  } finally {
    await keyed.close();
    await other.close();
  }
});

const pgRows =
  (db: { query(sql: string, params: unknown[]): Promise<{ rows: unknown[] }> }, schema: string): Rows =>
  async (thread) =>
    (
      await db.query(
        `SELECT type, sealed, length(data) AS bytes FROM "${schema}".agent_checkpoint_values
        WHERE session_id = $1 AND channel = '__start__' ORDER BY version`,
        [thread],
      )
    ).rows as { type: string; sealed: boolean; bytes: number }[];

test("PGlite: input rows go as references to the values that took them", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const store = await PostgresStore.open(db, { schema: "inputs" });
    const other = await PostgresStore.open(db, { schema: "inputs" });
    await graphTurns(store, other, pgRows(db, "inputs"));
    await rewritten(store, other, pgRows(db, "inputs"));
    await fellBack(store, other);
    await store.close();
    await other.close();
  } finally {
    await db.close();
  }
});

const reason = await postgresUnavailable();
for (const keyed of [false, true]) {
  test(`Postgres: input rows go as references to the values that took them, ${keyed ? "keyed" : "in clear"}`, {
    skip: reason ?? false,
  }, async () => {
    await inOwnSchema(`inputs_${keyed}`, async (pool, schema) => {
      const keyring = keyed ? { keyring: randomKeyring(["alice"]) } : {};
      const store = await PostgresStore.open(pool, { schema, ...keyring });
      const other = await PostgresStore.open(pool, { schema, ...keyring });
      await graphTurns(store, other, pgRows(pool, schema), keyed ? "alice" : undefined);
      if (!keyed) await rewritten(store, other, pgRows(pool, schema));
      if (!keyed) await fellBack(store, other);
      await store.close();
      await other.close();
    });
  });
}

// On a cluster a put is one statement a row in a transaction (the guard apart): the same references.
const cluster = await citusSchema("value_refs");
test("Citus: input rows go as references to the values that took them", {
  skip: cluster ? false : "no Citus cluster",
}, async () => {
  if (!cluster) return;
  const rows = pgRows(cluster.pool, cluster.schema);
  await graphTurns(cluster.store(), cluster.store(), rows);
  await rewritten(cluster.store(), cluster.store(), rows);
  await fellBack(cluster.store(), cluster.store());
});
