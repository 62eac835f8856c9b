// A database written before checkpoint ids were stored as bytes (SQLite migration 30, Postgres 29;
// src/sql/checkpoints/ids.ts) migrates forward and reads exactly as before: a thread with uuid6 ids and ids that
// are not canonical uuids (an app's own, an uppercase uuid), parents and pending writes, is written by this code,
// its id columns turned back into the text the code before wrote (and SQLite's tables into migration 27's form),
// the version set back, and the reopened store's `list`, `before`, `getTuple` of each id and of the latest compared
// with the same reads before the round trip. Every id column holds bytes after it.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import type pg from "pg";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { idOf } from "../../src/sql/checkpoints/ids.js";
import { checkpointsRoom } from "../../src/sql/checkpoints/room.js";
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { citusSchema } from "../fixtures/citus-db.js";
import { inOwnSchema, postgresUnavailable } from "../fixtures/postgres-db.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-compact-ids-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const THREAD = "t-ids";
const meta = { source: "loop" as const, step: 0, parents: {} };
// In write order: uuid6 ids, then ids that sort among them and around them as text.
const IDS = [
  uuid6(-1),
  uuid6(-1),
  "custom-1",
  uuid6(-1).toUpperCase(),
  "0-before-every-uuid",
  uuid6(-1),
  "zz-after-every-uuid",
  `${uuid6(-1)}-suffixed`,
];
const TASKS = [uuid6(-1), "task-a", "Task-B"];

const at = (checkpoint_id?: string): RunnableConfig => ({
  configurable: { thread_id: THREAD, checkpoint_ns: "", ...(checkpoint_id ? { checkpoint_id } : {}) },
});

/** The thread: a chain of checkpoints over `IDS`, each with pending writes under each of `TASKS`. */
async function write(saver: AgentSessionSaver): Promise<void> {
  let parent: string | undefined;
  for (const [i, id] of IDS.entries()) {
    const checkpoint = emptyCheckpoint();
    checkpoint.id = id;
    checkpoint.channel_values = { messages: [`message ${i}`] };
    checkpoint.channel_versions = { messages: i + 1 };
    const written = await saver.put(at(parent), checkpoint, { ...meta, step: i }, { messages: i + 1 });
    for (const task of TASKS) await saver.putWrites(written, [["messages", `${task} at ${i}`]], task);
    parent = id;
  }
}

/** Every read whose answer depends on stored ids: their order, `before`, each by id, the latest. */
async function reads(saver: AgentSessionSaver): Promise<unknown> {
  const list = [];
  for await (const t of saver.list(at())) list.push(t);
  const before = [];
  for await (const t of saver.list(at(), { before: at(IDS[5]) }))
    before.push(t.config.configurable?.checkpoint_id);
  const each = await Promise.all(IDS.map((id) => saver.getTuple(at(id))));
  return { list, before, each, latest: await saver.getTuple(at()) };
}

test("SQLite: a thread stored with text ids migrates and reads as before", async () => {
  const file = join(dir, "new.db");
  const store = new SqliteStore(file);
  const saver = new AgentSessionSaver(store);
  await write(saver);
  const expected = await reads(saver);
  await store.close();
  // The same file as the code before left it: migration 27's tables, text ids, at version 29.
  const old = join(dir, "old.db");
  copyFileSync(file, old);
  const db = new (loadBetterSqlite3())(old);
  db.function("text_id", (v: unknown) => (v === null ? null : idOf(v)));
  db.exec(`ALTER TABLE agent_checkpoints RENAME TO cps_new;
    ALTER TABLE agent_checkpoint_writes RENAME TO writes_new;
    DROP INDEX agent_checkpoints_id;`);
  for (const statement of checkpointsRoom.sqlite.migrations[0]!.statements) db.exec(statement);
  db.exec(`INSERT INTO agent_checkpoints
      SELECT session_id, ns, text_id(id), text_id(parent_id), type, data, metadata_type, metadata, versions, sealed
      FROM cps_new;
    INSERT INTO agent_checkpoint_writes
      SELECT session_id, ns, text_id(checkpoint_id), text_id(task_id), idx, channel, type, data, task_path, sealed
      FROM writes_new;
    DROP TABLE cps_new; DROP TABLE writes_new;
    UPDATE agent_session_schema SET version = 29;`);
  assert.equal(
    (
      db.prepare("SELECT count(*) AS n FROM agent_checkpoints WHERE typeof(id) = 'text'").get() as {
        n: number;
      }
    ).n,
    8,
  );
  db.close();

  const reopened = new SqliteStore(old);
  try {
    assert.deepEqual(await reads(new AgentSessionSaver(reopened)), expected);
    const kinds = reopened.driver.all(
      `SELECT DISTINCT typeof(id) AS k FROM agent_checkpoints UNION SELECT DISTINCT typeof(parent_id) FROM agent_checkpoints
      UNION SELECT DISTINCT typeof(checkpoint_id) FROM agent_checkpoint_writes
      UNION SELECT DISTINCT typeof(task_id) FROM agent_checkpoint_writes`,
    );
    assert.deepEqual(kinds.map((r) => r.k).sort(), ["blob", "null"]);
    const writes = reopened.driver.get<{ sql: string }>(
      "SELECT sql FROM sqlite_schema WHERE name = 'agent_checkpoint_writes'",
    );
    assert.match(writes?.sql ?? "", /WITHOUT ROWID/);
  } finally {
    await reopened.close();
  }
});

/** The Postgres round trip on `schema` through `pool`, its stores made by `open`. */
async function postgresRoundTrip(
  pool: pg.Pool,
  schema: string,
  open: () => Promise<PostgresStore>,
): Promise<void> {
  const store = await open();
  await write(new AgentSessionSaver(store));
  const expected = await reads(new AgentSessionSaver(store));
  await store.close();
  // The columns as migration 26 made them, holding the text the code before wrote, at version 28.
  const cps = `"${schema}".agent_checkpoints`;
  const writes = `"${schema}".agent_checkpoint_writes`;
  await pool.query(`ALTER TABLE ${cps} ALTER COLUMN id TYPE text COLLATE "C" USING encode(id, 'hex'),
    ALTER COLUMN parent_id TYPE text USING encode(parent_id, 'hex')`);
  await pool.query(`ALTER TABLE ${writes} ALTER COLUMN checkpoint_id TYPE text COLLATE "C" USING encode(checkpoint_id, 'hex'),
    ALTER COLUMN task_id TYPE text USING encode(task_id, 'hex')`);
  for (const [table, column] of [
    [cps, "id"],
    [cps, "parent_id"],
    [writes, "checkpoint_id"],
    [writes, "task_id"],
  ] as const) {
    const { rows } = await pool.query(
      `SELECT DISTINCT ${column} AS v FROM ${table} WHERE ${column} IS NOT NULL`,
    );
    for (const { v } of rows) {
      await pool.query(`UPDATE ${table} SET ${column} = $1 WHERE ${column} = $2`, [
        idOf(Buffer.from(v, "hex")),
        v,
      ]);
    }
  }
  await pool.query(`UPDATE "${schema}".agent_session_schema SET version = 28`);

  const reopened = await open();
  try {
    assert.deepEqual(await reads(new AgentSessionSaver(reopened)), expected);
    const { rows } = await pool.query(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
      WHERE table_schema = $1 AND column_name IN ('id', 'parent_id', 'checkpoint_id', 'task_id')
        AND table_name IN ('agent_checkpoints', 'agent_checkpoint_writes') ORDER BY 1, 2`,
      [schema],
    );
    assert.deepEqual(
      rows.map((r) => `${r.table_name}.${r.column_name} ${r.data_type}`),
      [
        "agent_checkpoint_writes.checkpoint_id bytea",
        "agent_checkpoint_writes.task_id bytea",
        "agent_checkpoints.id bytea",
        "agent_checkpoints.parent_id bytea",
      ],
    );
  } finally {
    await reopened.close();
  }
}

const reason = await postgresUnavailable();
test("Postgres: a thread stored with text ids migrates and reads as before", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema("compact_ids", (pool, schema) =>
    postgresRoundTrip(pool, schema, () => PostgresStore.open(pool, { schema })),
  );
});

const cluster = await citusSchema("compact_ids");
test("Citus: a thread stored with text ids migrates and reads as before", {
  skip: cluster ? false : "no Citus cluster",
}, async () => {
  if (!cluster) return;
  await postgresRoundTrip(cluster.pool, cluster.schema, async () => cluster.store());
});
