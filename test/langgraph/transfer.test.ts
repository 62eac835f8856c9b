// A LangGraph thread's checkpoints in the transfer (store/transfer/checkpoints.ts, the CLI's `checkpoint` lines):
// a thread with growing messages, pending writes, a fork and a subgraph namespace is exported and imported into a
// fresh store, through the store's transfer stream and through the CLI's export file; the saver's list and getTuple
// then answer the same tuples and the stored bytes are the same, on SQLite, PGlite and Postgres. LangGraph store items
// move with whole-store and owner-wide exports, their times kept. A keyed owner's thread and items are exported
// opened and sealed again under the importing store's key.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { PGlite } from "@electric-sql/pglite";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { writeExport } from "../../src/cli/transfer/export.js";
import { readImport } from "../../src/cli/transfer/import.js";
import type { GraphItem } from "../../src/contract/graph-items.js";
import type { TransferItem } from "../../src/contract/transfer.js";
import { AgentSessionSaver, AgentSessionStore } from "../../src/langgraph/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import type { PostgresSource } from "../../src/sql/engines/postgres/client.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { randomKeyring } from "../../src/testing/privacy/keyless-writes.js";
import { newPGlite } from "../fixtures/pglite.js";
import {
  dropSchema,
  pgliteSwitchedOff,
  postgresUnavailable,
  type Runner,
  testPool,
} from "../fixtures/postgres-db.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-lg-transfer-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = "zqxlgtransferq";
type Store = SqliteStore | PostgresStore;
const meta = { source: "loop" as const, step: 0, parents: {} };
const cfg = (thread_id: string, checkpoint_id?: string, checkpoint_ns?: string): RunnableConfig => ({
  configurable: {
    thread_id,
    user_id: "alice",
    ...(checkpoint_id ? { checkpoint_id } : {}),
    ...(checkpoint_ns !== undefined ? { checkpoint_ns } : {}),
  },
});

/** Alice's thread: 12 steps of a growing messages list with pending writes, a fork from step 5, a subgraph step. */
async function writeThread(store: Store): Promise<void> {
  const saver = new AgentSessionSaver(store, { ownerKey: "user_id" });
  const messages: string[] = [];
  let parent: string | undefined;
  const ids: string[] = [];
  const put = async (list: string[], version: number, from?: string, ns?: string) => {
    const checkpoint = emptyCheckpoint();
    checkpoint.id = uuid6(-1);
    checkpoint.channel_values = { messages: list, count: version };
    checkpoint.channel_versions = { messages: version, count: version };
    const versions = { messages: version, count: version };
    const saved = await saver.put(cfg("t-1", from, ns), checkpoint, { ...meta, step: version }, versions);
    return String(saved.configurable?.checkpoint_id);
  };
  for (let i = 1; i <= 12; i++) {
    messages.push(`${SECRET} message ${i} ${"words ".repeat(30)}`);
    parent = await put([...messages], i, parent);
    ids.push(parent);
    if (i % 3 === 0) {
      await saver.putWrites(
        cfg("t-1", parent),
        [
          ["messages", `${SECRET} write ${i}`],
          ["count", i],
        ],
        `task-${i}`,
      );
    }
  }
  // A fork from step 5, and a subgraph's checkpoint.
  await put([...messages.slice(0, 5), `${SECRET} forked`], 13, ids[4]);
  await put([`${SECRET} inner`], 1, undefined, "inner:1");
}

/** Everything the saver answers of the thread, and its stored rows' bytes (hex). */
async function snapshot(store: Store): Promise<unknown> {
  const saver = new AgentSessionSaver(store, { ownerKey: "user_id" });
  const tuples = [];
  for await (const tuple of saver.list(cfg("t-1"))) tuples.push(tuple);
  for await (const tuple of saver.list(cfg("t-1", undefined, "inner:1"))) tuples.push(tuple);
  const latest = await saver.getTuple(cfg("t-1"));
  const hex = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString("hex"));
  const rows = (await store.checkpoints.page({ sessionId: "t-1", limit: 1000 })).map((c) => ({
    ...c,
    data: hex(c.data),
    metadata: hex(c.metadata),
    values: c.values.map((v) => ({ ...v, data: hex(v.data) })),
    writes: c.writes
      .map((w) => ({ ...w, data: hex(w.data) }))
      .sort((a, b) => a.taskId.localeCompare(b.taskId)),
  }));
  return { tuples, latest, rows };
}

async function viaStream(from: Store, to: Store): Promise<void> {
  const items: TransferItem[] = [];
  for await (const item of from.transfer.exportSession("t-1")) items.push(item);
  assert.equal(items.filter((i) => i.kind === "checkpoint").length, 14);
  const result = await to.transfer.importSession(
    (async function* () {
      yield* items;
    })(),
  );
  assert.equal(result.checkpoints, 14);
}

/** The CLI's export of the whole store (or of `owner`'s sessions and items), read back by its import into `to`. */
async function viaFile(from: Store, to: Store, owner?: string, checkpoints = 14): Promise<string> {
  let text = "";
  const none = { increment() {}, setTotal() {}, stop() {} };
  const counts = await writeExport(
    from,
    async (chunk) => {
      text += chunk;
    },
    owner === undefined
      ? { sessionIds: [], progress: none, countFirst: false }
      : { sessionIds: ["t-1"], exact: true, owner, progress: none, countFirst: false },
  );
  assert.equal(counts.checkpoints, checkpoints);
  const summary = await readImport(
    to,
    (async function* () {
      yield* text.split("\n").filter((line) => line.length > 0);
    })(),
  );
  assert.equal(summary.checkpoints, checkpoints);
  return text;
}

/** Alice's and bob's LangGraph store items, one with a time to live, one refreshed by a read (its expiry moved). */
async function writeItems(store: Store): Promise<void> {
  const items = new AgentSessionStore(store);
  await items.put(["alice", "memories"], "food", { text: `${SECRET} likes tea`, n: 1.5 });
  await items.put(["alice", "memories", "deep"], "trip", { text: "Lisbon" }, undefined, { ttl: 60 });
  await new Promise((r) => setTimeout(r, 5));
  await items.get(["alice", "memories", "deep"], "trip");
  await items.put(["bob", "notes"], "n1", { text: "bob's note" });
}

/** Every item of the store (or of `owner`), times included. */
async function itemsOf(store: Store, owner: string | null = null): Promise<GraphItem[]> {
  const found: GraphItem[] = [];
  for await (const item of store.graphItems.exportItems(owner, Date.now())) found.push(item);
  return found;
}

/** The cases on one backend: `open(name, keyring)` opens a fresh store's place by name. */
function cases(backend: string, open: (name: string, keyring?: Keyring) => Promise<Store>) {
  for (const [how, move] of [
    ["the transfer stream", viaStream],
    ["the CLI's export file", viaFile],
  ] as const) {
    test(`${backend}: a thread's checkpoints move through ${how}; list and getTuple answer the same, bytes included`, async () => {
      const from = await open(`from_${how.length}`);
      const to = await open(`to_${how.length}`);
      try {
        await writeThread(from);
        const before = (await snapshot(from)) as { tuples: unknown[]; rows: { values: unknown[] }[] };
        assert.equal(before.tuples.length, 15, "14 checkpoints, the subgraph's listed by its namespace too");
        assert.equal(before.rows.length, 14);
        const text = await move(from, to);
        assert.deepEqual(await snapshot(to), before);
        if (typeof text === "string") {
          // The messages list is carried as deltas: each message about once, not once per step.
          const carried = text.split(`${SECRET} message 1 `).length - 1;
          assert.ok(carried < 4, `message 1 carried ${carried} times`);
        }
      } finally {
        await from.close();
        await to.close();
      }
    });
  }

  test(`${backend}: store items move with a whole-store export and an owner's, their times kept`, async () => {
    const from = await open("items_from");
    const whole = await open("items_whole");
    const alices = await open("items_alice");
    try {
      await writeThread(from);
      await writeItems(from);
      const before = await itemsOf(from);
      assert.equal(before.length, 3);
      assert.ok(before.some((i) => i.ttlMs === 3_600_000 && i.expiresAt !== null));
      await viaFile(from, whole);
      assert.deepEqual(await itemsOf(whole), before);
      await viaFile(from, alices, "alice");
      assert.deepEqual(await itemsOf(alices), await itemsOf(from, "alice"), "an owner's export: hers only");
      // A second import keeps what is stored.
      const again = await viaFile(from, whole);
      assert.ok(again.length > 0);
      assert.deepEqual(await itemsOf(whole), before);
    } finally {
      await from.close();
      await whole.close();
      await alices.close();
    }
  });

  test(`${backend}: a keyed owner's thread is exported opened and sealed again under the importing store's key`, async () => {
    const from = await open("sealed_from", randomKeyring(["alice"]));
    const to = await open("sealed_to", randomKeyring(["alice"]));
    try {
      await writeThread(from);
      await writeItems(from);
      const before = await snapshot(from);
      const items = await itemsOf(from);
      await viaFile(from, to);
      assert.deepEqual(await snapshot(to), before);
      assert.deepEqual(await itemsOf(to), items);
    } finally {
      await from.close();
      await to.close();
    }
    const keyless = await open("sealed_to");
    try {
      await assert.rejects(snapshot(keyless), { code: "DECRYPT_FAILED" });
      await assert.rejects(itemsOf(keyless, "alice"), { code: "DECRYPT_FAILED" });
    } finally {
      await keyless.close();
    }
  });
}

describe("SQLite", () => {
  cases("SQLite", async (name, keyring) => {
    return new SqliteStore(join(dir, `${name}.db`), keyring ? { keyring } : {});
  });
  test("SQLite: the importing store's file holds no clear byte of a keyed owner's thread", () => {
    assert.equal(readFileSync(join(dir, "sealed_to.db")).includes(SECRET), false);
  });
});

describe("PGlite", { skip: pgliteSwitchedOff() ?? false }, () => {
  const dbs = new Map<string, PGlite>();
  after(async () => {
    for (const db of dbs.values()) await db.close();
  });
  cases("PGlite", async (name, keyring) => {
    let db = dbs.get(name);
    if (!db) {
      db = await newPGlite();
      dbs.set(name, db);
    }
    // A store's close leaves the PGlite open for the case's next store on it.
    return PostgresStore.open(db as unknown as PostgresSource, keyring ? { keyring } : {});
  });
});

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the PostgreSQL transfer tests of checkpoints: ${unavailable}`);
describe("Postgres", { skip: unavailable ?? false }, () => {
  const pool = unavailable ? undefined : testPool(4);
  const schemas = new Set<string>();
  after(async () => {
    for (const schema of schemas) await dropSchema(pool as unknown as Runner, schema);
    await pool?.end();
  });
  cases("Postgres", async (name, keyring) => {
    const schema = `agent_session_lgxfer_${name}_${process.pid}`;
    if (!schemas.has(schema)) await dropSchema(pool as unknown as Runner, schema);
    schemas.add(schema);
    return PostgresStore.open(pool as unknown as PostgresSource, { schema, ...(keyring ? { keyring } : {}) });
  });
});
