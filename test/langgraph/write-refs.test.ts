// A pending write held by a stored value goes as a reference to it (src/sql/checkpoints/write-refs.ts), on SQLite,
// PGlite and Postgres: the input task's write of the messages channel is a slice of the `__start__` value, stored
// with no bytes of its own, read back exact (bytes included) by another process, for a keyed owner too; when the
// value row the writer knows was deleted and written again under a new tag by another process, the write goes in
// full; in a graph's turns the reply's write (stored before the next checkpoint) is turned into a reference by that
// checkpoint's put, and every write reads back as the serializer wrote it.
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
  emptyCheckpoint,
  JsonPlusSerializer,
  type PendingWrite,
  uuid6,
} from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import type { CheckpointerStore } from "../../src/langgraph/saver.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { idOf } from "../../src/sql/checkpoints/ids.js";
import { locate, parseRef, refType, resolve } from "../../src/sql/checkpoints/write-refs.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { randomKeyring } from "../../src/testing/privacy/keyless-writes.js";
import { citusSchema } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { inOwnSchema, pgliteSwitchedOff, postgresUnavailable } from "../fixtures/postgres-db.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-write-refs-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const meta = { source: "input" as const, step: -1, parents: {} };
const input = {
  messages: [{ role: "user", content: "a user message long enough to be worth a reference ".repeat(3) }],
};

// The stored type and data length of each pending write of the thread, by task.
type Rows = (thread: string) => Promise<{ task_id: string; type: string; bytes: number }[]>;

async function refs(
  store: CheckpointerStore,
  other: CheckpointerStore,
  rows: Rows,
  owner?: string,
): Promise<void> {
  const opts = { ownerKey: "user_id" };
  const writer = new AgentSessionSaver(store, opts);
  const reader = new AgentSessionSaver(other, opts);
  const thread: RunnableConfig = {
    configurable: { thread_id: "t-refs", ...(owner ? { user_id: owner } : {}) },
  };
  const checkpoint = emptyCheckpoint();
  checkpoint.id = uuid6(-1);
  checkpoint.channel_values = { __start__: input };
  checkpoint.channel_versions = { __start__: 1 };
  await writer.put(thread, checkpoint, meta, { __start__: 1 });
  const at = { configurable: { ...thread.configurable, checkpoint_id: checkpoint.id } };
  await writer.putWrites(
    at,
    [
      ["messages", input.messages],
      ["branch:to:agent", null],
    ],
    "task-1",
  );
  const stored = await rows("t-refs");
  assert.equal(stored.length, 2);
  const ref = stored.find((r) => r.type.endsWith("|s1"));
  assert.ok(ref, `a write stored as a reference: ${JSON.stringify(stored)}`);
  assert.equal(ref.bytes, 0, "no bytes of its own");
  // Another process (no cache) reads the writes back exact, bytes included.
  const [, bytes] = await new JsonPlusSerializer().dumpsTyped(input.messages);
  const read = await other.checkpoints.get("t-refs", "", checkpoint.id);
  assert.deepEqual(
    read?.writes.find((w) => w.channel === "messages"),
    { taskId: "task-1", idx: 0, channel: "messages", taskPath: "", type: "json", data: bytes },
  );
  assert.deepEqual((await reader.getTuple(at))?.pendingWrites, [
    ["task-1", "messages", input.messages],
    ["task-1", "branch:to:agent", null],
  ]);
  // Another process deletes the thread and writes the same checkpoint again (its value row under a new tag): the
  // writer's reference no longer holds, and the write goes in full.
  await reader.deleteThread("t-refs");
  await reader.put(thread, checkpoint, meta, { __start__: 1 });
  await writer.putWrites(at, [["messages", input.messages]], "task-2");
  const again = await rows("t-refs");
  assert.deepEqual(
    again.map((r) => [r.task_id, r.type.endsWith("|s1")]),
    [["task-2", false]],
  );
  assert.deepEqual((await reader.getTuple(at))?.pendingWrites, [["task-2", "messages", input.messages]]);
}

// A graph's turns (a user message, the model's reply): every messages write goes as a reference (the input's to the
// __start__ value, the reply's to the next checkpoint's list, less the id the reducer adds), and every checkpoint's
// pending writes read back by another process as the serializer wrote them, bytes included.
async function graphTurns(store: CheckpointerStore, other: CheckpointerStore, rows: Rows): Promise<void> {
  const serde = new JsonPlusSerializer();
  const written = new Map<string, Uint8Array>();
  class Recording extends AgentSessionSaver {
    // The saver's putWrites called first, as LangGraph calls it: a put called after it waits for it from the call on.
    override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
      const done = super.putWrites(config, writes, taskId);
      for (const [i, [channel, value]] of writes.entries())
        written.set(
          `${config.configurable?.checkpoint_id} ${taskId} ${i} ${channel}`,
          (await serde.dumpsTyped(value))[1],
        );
      return done;
    }
  }
  const replies = [
    "the first reply, long enough to be kept by reference",
    "the second reply, also long enough",
  ];
  const model = new FakeListChatModel({ responses: replies });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: new Recording(store) });
  const thread = { configurable: { thread_id: "t-graph" } };
  for (const text of ["a first user message of some length", "a second user message of some length"])
    await graph.invoke({ messages: [new HumanMessage(text)] }, thread);
  const stored = await rows("t-graph");
  const messages = stored.filter((r) => r.bytes === 0 || r.type.includes("|"));
  const references = stored.filter((r) => r.type.endsWith("|s1")).length;
  assert.equal(references, 4, JSON.stringify(stored));
  assert.ok(messages.length >= 4);
  let checked = 0;
  for await (const tuple of new AgentSessionSaver(other).list(thread)) {
    const read = await other.checkpoints.get("t-graph", "", String(tuple.config.configurable?.checkpoint_id));
    for (const w of read?.writes ?? []) {
      const key = `${tuple.config.configurable?.checkpoint_id} ${w.taskId} ${w.idx} ${w.channel}`;
      assert.deepEqual(new Uint8Array(w.data), new Uint8Array(written.get(key) ?? []), key);
      checked++;
    }
  }
  assert.equal(checked, written.size);
}

test("a write's place in a value: a slice, a list of the last element, less a gap; a reference's tag round trip", () => {
  const enc = (text: string) => new TextEncoder().encode(text);
  const message = `{"lc":1,"kwargs":{"content":"${"x".repeat(80)}","response_metadata":{}}}`;
  const withId = `${message.slice(0, -2)},"id":"6c0ac039-1487-4488-b31c-99917366c93b"}}`;
  const cases: [string, string][] = [
    [`{"messages":[${message}]}`, `[${message}]`], // the input: a slice
    [`[{"a":1},${message}]`, `[${message}]`], // the list's last element
    [`[{"a":1},${withId}]`, `[${message}]`], // less the id the reducer added
  ];
  for (const [value, write] of cases) {
    const at = locate(enc(value), enc(write));
    assert.ok(at, write);
    const ref = { channel: "a,b|c%", version: "2.5", tag: "t", ...at };
    const parsed = parseRef(refType("json|x", ref));
    assert.equal(parsed?.type, "json|x");
    assert.equal(parsed?.channel, "a,b|c%");
    assert.deepEqual(parsed && resolve(parsed, enc(value)), enc(write));
  }
  assert.equal(locate(enc(`[${message}]`), enc(`[${message.replace("x", "y")}]`)), null);
  // Not the last element: the reference still reads back the write's bytes, or there is none.
  const other = enc(`[${message},{"b":2}]`);
  const at = locate(other, enc(`[${message}]`));
  if (at) assert.deepEqual(resolve(at, other), enc(`[${message}]`));
  assert.equal(parseRef("json|z1"), null);
});

const sqliteRows =
  (file: string): Rows =>
  async (thread) => {
    const { loadBetterSqlite3 } = await import("../../src/sql/engines/sqlite/better-sqlite3.js");
    const db = new (loadBetterSqlite3())(file, { readonly: true });
    try {
      return db
        .prepare(
          "SELECT task_id, type, length(data) AS bytes FROM agent_checkpoint_writes WHERE session_id = ? ORDER BY task_id, idx",
        )
        .all(thread)
        .map(readable);
    } finally {
      db.close();
    }
  };

for (const keyed of [false, true]) {
  const label = keyed ? "a keyed owner's" : "in clear";
  test(`SQLite: messages writes go as references to values, ${label}`, async () => {
    const file = join(dir, `refs-${keyed}.db`);
    const keyring = keyed ? { keyring: randomKeyring(["alice"]) } : {};
    const store = new SqliteStore(file, keyring);
    const other = new SqliteStore(file, keyring);
    try {
      await refs(store, other, sqliteRows(file), keyed ? "alice" : undefined);
      if (!keyed) await graphTurns(store, other, sqliteRows(file));
    } finally {
      await store.close();
      await other.close();
    }
  });
}

// A raw row with its task id read from its stored form (ids.ts); stored ids sort as their text, so the order holds.
function readable(row: unknown): { task_id: string; type: string; bytes: number } {
  const r = row as { task_id: unknown; type: string; bytes: number };
  return { ...r, task_id: idOf(r.task_id) };
}

const pgRows =
  (db: { query(sql: string, params: unknown[]): Promise<{ rows: unknown[] }> }, schema: string): Rows =>
  async (thread) =>
    (
      await db.query(
        `SELECT task_id, type, length(data) AS bytes FROM "${schema}".agent_checkpoint_writes WHERE session_id = $1
        ORDER BY task_id, idx`,
        [thread],
      )
    ).rows.map(readable);

test("PGlite: messages writes go as references to values", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const store = await PostgresStore.open(db, { schema: "refs" });
    const other = await PostgresStore.open(db, { schema: "refs" });
    await refs(store, other, pgRows(db, "refs"));
    await graphTurns(store, other, pgRows(db, "refs"));
    await store.close();
    await other.close();
  } finally {
    await db.close();
  }
});

const reason = await postgresUnavailable();
for (const keyed of [false, true]) {
  test(`Postgres: messages writes go as references to values, ${keyed ? "keyed" : "in clear"}`, {
    skip: reason ?? false,
  }, async () => {
    await inOwnSchema(`refs_${keyed}`, async (pool, schema) => {
      const keyring = keyed ? { keyring: randomKeyring(["alice"]) } : {};
      const store = await PostgresStore.open(pool, { schema, ...keyring });
      const other = await PostgresStore.open(pool, { schema, ...keyring });
      await refs(store, other, pgRows(pool, schema), keyed ? "alice" : undefined);
      if (!keyed) await graphTurns(store, other, pgRows(pool, schema));
      await store.close();
      await other.close();
    });
  });
}

// On a cluster a write is one statement a row in a transaction (the guard apart): the same references. LangGraph
// does not wait for a task's putWrites before the next checkpoint's put, which there often started before the write
// was stored and left it whole; the saver's put now waits for its parent's writes called before it
// (src/langgraph/write-order.ts).
const cluster = await citusSchema("write_refs");
test("Citus: messages writes go as references to values", {
  skip: cluster ? false : "no Citus cluster",
}, async () => {
  if (!cluster) return;
  const rows = pgRows(cluster.pool, cluster.schema);
  await refs(cluster.store(), cluster.store(), rows);
  await graphTurns(cluster.store(), cluster.store(), rows);
});
