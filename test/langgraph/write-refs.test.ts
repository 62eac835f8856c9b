// A pending write held by a stored value goes as a reference to it (src/sql/checkpoints/write-refs.ts), on SQLite,
// PGlite and Postgres: the input task's write of the messages channel is a slice of the `__start__` value, stored
// with no bytes of its own, read back exact (bytes included) by another process; in the multi-statement write
// (a keyed owner's, sealed) too; and when the value row the writer knows was deleted and written again under a new
// tag by another process, the write goes in full.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, JsonPlusSerializer, uuid6 } from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import type { CheckpointerStore } from "../../src/langgraph/saver.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { randomKeyring } from "../../src/testing/privacy/keyless-writes.js";
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
        .all(thread) as { task_id: string; type: string; bytes: number }[];
    } finally {
      db.close();
    }
  };

for (const keyed of [false, true]) {
  const label = keyed ? "a keyed owner's" : "in clear";
  test(`SQLite: the input task's write goes as a reference to the __start__ value, ${label}`, async () => {
    const file = join(dir, `refs-${keyed}.db`);
    const keyring = keyed ? { keyring: randomKeyring(["alice"]) } : {};
    const store = new SqliteStore(file, keyring);
    const other = new SqliteStore(file, keyring);
    try {
      await refs(store, other, sqliteRows(file), keyed ? "alice" : undefined);
    } finally {
      await store.close();
      await other.close();
    }
  });
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
    ).rows as { task_id: string; type: string; bytes: number }[];

test("PGlite: the input task's write goes as a reference to the __start__ value", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await PGlite.create();
  try {
    const store = await PostgresStore.open(db, { schema: "refs" });
    const other = await PostgresStore.open(db, { schema: "refs" });
    await refs(store, other, pgRows(db, "refs"));
    await store.close();
    await other.close();
  } finally {
    await db.close();
  }
});

const reason = await postgresUnavailable();
for (const keyed of [false, true]) {
  test(`Postgres: the input task's write goes as a reference to the __start__ value, ${keyed ? "keyed" : "in clear"}`, {
    skip: reason ?? false,
  }, async () => {
    await inOwnSchema(`refs_${keyed}`, async (pool, schema) => {
      const keyring = keyed ? { keyring: randomKeyring(["alice"]) } : {};
      const store = await PostgresStore.open(pool, { schema, ...keyring });
      const other = await PostgresStore.open(pool, { schema, ...keyring });
      await refs(store, other, pgRows(pool, schema), keyed ? "alice" : undefined);
      await store.close();
      await other.close();
    });
  });
}
