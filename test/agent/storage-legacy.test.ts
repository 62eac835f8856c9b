// Tables written by the old SQLiteSessionStorage / PostgresSessionStorage (agent_chat_* with a prefix) are moved
// into the store on first use, once, and left untouched. The fixtures are written with the old classes' own SQL.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import pg from "pg";
import { toJson } from "../../src/agent/codec.js";
import { PostgresSessionStorage, type SessionState, SQLiteSessionStorage } from "../../src/agent/index.js";
import { loadBetterSqlite3 } from "../../src/sqlite/connection/better-sqlite3.js";
import { offloadJson } from "../../src/store/media/offload.js";
import { hasAttachmentStore, type SessionStore } from "../../src/store/types.js";
import { sampleMessages, sampleState } from "../../src/testing/storage/fixtures.js";
import { tempDir } from "../cli/helpers.js";
import { PG_URL, postgresUnavailable } from "../fixtures/postgres-db.js";

const image = Buffer.alloc(50_000, 3).toString("base64");
const withImage = () => {
  const state = sampleState({ metadata: { title: "Old", "agent.turn": { turn: 1, status: "done" } } });
  state.messages.push({
    id: "img",
    createdAt: 1_700_000_000_009,
    role: "user",
    content: [{ type: "image", image, mediaType: "image/png" }],
  } as SessionState["messages"][number]);
  return state;
};
async function attachments(store: SessionStore) {
  assert.ok(hasAttachmentStore(store));
  return store.attachments.stats();
}
const expected = (state: SessionState) => JSON.parse(toJson(state)) as SessionState;

/** The old SQLiteSessionStorage's schema and rows (media offloaded to its own prefixed attachment tables). */
function writeOldSqlite(file: string, prefix: string, states: SessionState[]): void {
  const Database = loadBetterSqlite3();
  const db = new Database(file);
  db.exec(`CREATE TABLE ${prefix}sessions (id TEXT PRIMARY KEY, parent_id TEXT, metadata TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
    usage_count INTEGER NOT NULL DEFAULT 0)`);
  for (const table of ["messages", "usage"]) {
    db.exec(`CREATE TABLE ${prefix}${table} (session_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
      PRIMARY KEY (session_id, seq))`);
  }
  db.exec(`CREATE TABLE ${prefix}attachments (hash TEXT NOT NULL, chunk INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (hash, chunk))`);
  db.exec(`CREATE TABLE ${prefix}attachment_links (message_seq INTEGER NOT NULL, hash TEXT NOT NULL,
    PRIMARY KEY (message_seq, hash)) WITHOUT ROWID`);
  for (const state of states) {
    db.prepare(`INSERT INTO ${prefix}sessions VALUES (?, ?, ?, ?, ?, ?, ?)`).run(
      state.id,
      state.parentId ?? null,
      toJson(state.metadata),
      state.createdAt,
      state.updatedAt,
      state.messages.length,
      state.usage.entries.length,
    );
    state.messages.forEach((message, seq) => {
      const stored = offloadJson(toJson(message));
      const row = db
        .prepare(`INSERT INTO ${prefix}messages (session_id, seq, body) VALUES (?, ?, ?) RETURNING rowid`)
        .get(state.id, seq, stored.content) as { rowid: number };
      for (const { hash, bytes } of stored.attachments) {
        db.prepare(`INSERT OR IGNORE INTO ${prefix}attachments VALUES (?, 0, ?)`).run(hash, bytes);
        db.prepare(`INSERT INTO ${prefix}attachment_links VALUES (?, ?)`).run(row.rowid, hash);
      }
    });
    state.usage.entries.forEach((entry, seq) => {
      db.prepare(`INSERT INTO ${prefix}usage VALUES (?, ?, ?)`).run(state.id, seq, toJson(entry));
    });
  }
  db.close();
}

function oldRowCount(file: string, prefix: string): number {
  const Database = loadBetterSqlite3();
  const db = new Database(file, { readonly: true });
  const count = (table: string) =>
    (db.prepare(`SELECT COUNT(*) AS n FROM ${prefix}${table}`).get() as { n: number }).n;
  const total = count("sessions") + count("messages") + count("usage") + count("attachments");
  db.close();
  return total;
}

describe("old SQLiteSessionStorage tables", () => {
  const tmp = tempDir();
  after(() => tmp.remove());

  it("are moved into the store once, losslessly, and left untouched", async () => {
    const file = tmp.path("old.db");
    const a = withImage();
    const fork = { ...sampleState({ parentId: a.id }), messages: a.messages.slice(0, 2) };
    writeOldSqlite(file, "agent_chat_", [a, fork]);
    const before = oldRowCount(file, "agent_chat_");
    // Two storages opening the file at once (two processes starting together) both finish with one copy.
    const [one, two] = [new SQLiteSessionStorage(file), new SQLiteSessionStorage(file)];
    const [listed] = await Promise.all([one.list(), two.list()]);
    assert.deepEqual([...listed].sort(), [a.id, fork.id].sort());
    assert.deepEqual(await one.load(a.id), expected(a));
    assert.deepEqual(await two.load(fork.id), expected(fork));
    const store = await one.store();
    assert.equal(await store.session(a.id).getPathLength(), a.messages.length);
    const info = await store.registry.get(a.id);
    assert.equal(info?.input_tokens, a.usage.inputTokens, "counters added once");
    assert.equal((await store.registry.get(fork.id))?.parent_session_id, a.id);
    assert.equal((await attachments(store)).count, 1);
    await Promise.all([one.close(), two.close()]);
    // Later opens read only the marker; appends go to the store, the old tables stay as they were.
    const again = new SQLiteSessionStorage(file);
    await again.appendMessages(a.id, sampleMessages("x").slice(0, 1), { updatedAt: a.updatedAt + 1 });
    assert.equal((await again.load(a.id))?.messages.length, a.messages.length + 1);
    await again.close();
    assert.equal(oldRowCount(file, "agent_chat_"), before);
  });

  it("honours a custom tablePrefix", async () => {
    const file = tmp.path("prefixed.db");
    const state = sampleState();
    writeOldSqlite(file, "myapp_", [state]);
    const storage = new SQLiteSessionStorage(file, { tablePrefix: "myapp_" });
    assert.deepEqual(await storage.load(state.id), expected(state));
    await storage.close();
  });
});

const unavailable = await postgresUnavailable();
describe("old PostgresSessionStorage tables", { skip: unavailable ?? false }, () => {
  const prefix = `old_agent_${process.pid}_`;
  const schema = `agent_legacy_${process.pid}`;
  const admin = unavailable ? undefined : new pg.Pool({ connectionString: PG_URL, max: 2 });
  after(async () => {
    await admin?.query(`DROP TABLE IF EXISTS ${prefix}sessions, ${prefix}messages, ${prefix}usage`);
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.end();
  });

  it("are moved into the store once, losslessly, and left untouched", async () => {
    const db = admin!;
    await db.query(`CREATE TABLE ${prefix}sessions (id text PRIMARY KEY, parent_id text, metadata text NOT NULL,
      created_at bigint NOT NULL, updated_at bigint NOT NULL, message_count integer NOT NULL DEFAULT 0,
      usage_count integer NOT NULL DEFAULT 0)`);
    for (const table of ["messages", "usage"]) {
      await db.query(`CREATE TABLE ${prefix}${table} (session_id text NOT NULL, seq integer NOT NULL,
        body text NOT NULL, PRIMARY KEY (session_id, seq))`);
    }
    const state = withImage();
    await db.query(`INSERT INTO ${prefix}sessions VALUES ($1, NULL, $2, $3, $4, $5, $6)`, [
      state.id,
      toJson(state.metadata),
      state.createdAt,
      state.updatedAt,
      state.messages.length,
      state.usage.entries.length,
    ]);
    for (const [table, rows] of [
      ["messages", state.messages],
      ["usage", state.usage.entries],
    ] as const) {
      for (const [seq, row] of rows.entries()) {
        await db.query(`INSERT INTO ${prefix}${table} VALUES ($1, $2, $3)`, [state.id, seq, toJson(row)]);
      }
    }
    const open = () => new PostgresSessionStorage(PG_URL, { schema, tablePrefix: prefix });
    const [one, two] = [open(), open()];
    await Promise.all([one.list(), two.list()]);
    assert.deepEqual(await one.load(state.id), expected(state));
    const store = await one.store();
    assert.equal(await store.session(state.id).getPathLength(), state.messages.length);
    assert.equal((await store.registry.get(state.id))?.input_tokens, state.usage.inputTokens);
    assert.equal((await attachments(store)).count, 1, "the image is offloaded on the way in");
    await Promise.all([one.close(), two.close()]);
    const old = await db.query(`SELECT COUNT(*)::int AS n FROM ${prefix}messages`);
    assert.equal(old.rows[0].n, state.messages.length);
  });
});
