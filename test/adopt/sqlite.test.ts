import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { AgentSearchProvider, Session, SqliteStore } from "../../src/index.js";
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import { bytesOf } from "../../src/testing/contract/media-harness.js";
import {
  imageMessage,
  type ReferenceSnapshot,
  ref,
  registryFields,
  text,
  writeReferenceSqlite,
} from "../fixtures/reference-data.js";
import { runFixture } from "../helpers/child.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";
import { warningsOf } from "../helpers/warnings.js";

const Database = loadBetterSqlite3();
const dir = mkdtempSync(join(tmpdir(), "agent-session-adopt-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const ids = (messages: { id: string }[]) => messages.map((m) => m.id);

/** Row counts of the reference's tables, to prove adoption leaves them untouched. */
function sourceCounts(db: InstanceType<typeof Database>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const table of [
    "assistant_messages",
    "assistant_compactions",
    "assistant_sessions",
    "cf_agents_context_blocks",
    "cf_agents_search_entries",
  ]) {
    counts[table] = (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  }
  return counts;
}

/** Everything the reference read back, read back through our store. */
async function assertAdopted(store: SqliteStore, snap: ReferenceSnapshot): Promise<void> {
  for (const [sessionId, history] of snap.histories) {
    const ours = ids(await store.session(sessionId).getHistory());
    // The reference stored "compaction_bogus" (a reserved id we refuse); its child hangs under its parent.
    const expected = sessionId === snap.forkId ? history.filter((id) => id !== "compaction_bogus") : history;
    assert.deepEqual(ours, expected, `history of session "${sessionId}"`);
  }
  const chat = store.session(snap.chatId);
  assert.deepEqual(
    (await chat.getHistory()).filter((m) => !m.id.startsWith("compaction_")),
    snap.chat.filter((m) => !m.id.startsWith("compaction_")),
  );
  assert.deepEqual(ids(await chat.getBranches("u1")), snap.branchesOfFirst);
  assert.equal((await chat.getCompactions()).length, snap.compactions);
  assert.equal((await chat.getLatestLeaf())?.id, "a3");
  const registry = await store.registry.list();
  assert.deepEqual(
    registry.map(registryFields).sort((a, b) => a.name.localeCompare(b.name)),
    [...snap.sessions].sort((a, b) => a.name.localeCompare(b.name)),
  );
  for (const [key, content] of snap.blocks) assert.equal(await store.blocks.getBlock(key), content);
  // Code that used the reference finds its block, cached prompt, search entries and messages unchanged.
  const session = Session.create(store)
    .forSession(snap.chatId)
    .withContext("memory", { description: "Facts", maxTokens: 200 })
    .withContext("notes", { description: "Notes", provider: new AgentSearchProvider(store) })
    .withCachedPrompt();
  assert.equal(await session.freezeSystemPrompt(), snap.prompt);
  assert.equal(session.getContextBlock("memory")?.content, "likes tea");
  const notes = new AgentSearchProvider(store);
  notes.init("notes");
  assert.equal(await notes.search("deploy"), snap.notesSearch);
  assert.deepEqual(ids(await session.search("Friday")), ["u1"]);
}

describe("adoption of the reference's SQLite tables", () => {
  test("a file the reference wrote is adopted on open: tree, overlays, registry, blocks, prompt, entries", async () => {
    const path = join(dir, "reference.db");
    const agent = sqlTagAgent(path);
    const snap = await writeReferenceSqlite(agent);
    const before = sourceCounts(agent.db);
    const u1Time = (
      agent.db.prepare("SELECT created_at FROM assistant_messages WHERE id = 'u1'").get() as {
        created_at: string;
      }
    ).created_at;
    agent.db.close();

    const store = new SqliteStore(path);
    const report = store.adopted;
    assert.ok(report);
    assert.equal(report.sessions, 3);
    assert.deepEqual(report.messages, { inserted: 10, skipped: 0 });
    assert.deepEqual(report.compactions, { inserted: 1, skipped: 0 });
    assert.deepEqual(report.registry, { inserted: 2, skipped: 0 });
    assert.deepEqual(report.blocks, { inserted: 2, skipped: 0 });
    assert.deepEqual(report.entries, { inserted: 2, skipped: 0 });
    // Every adopted row was read back: messages, the overlay, registry rows, blocks, entries.
    assert.equal(report.verified, 10 + 1 + 2 + 2 + 2);
    assert.equal(report.rejectedCount, 1);
    assert.deepEqual(report.rejected[0], {
      table: "assistant_messages",
      sessionId: snap.forkId,
      id: "compaction_bogus",
      reason: 'the id starts with the reserved "compaction_"',
    });
    await assertAdopted(store, snap);
    // Timestamps travel (SQLite's CURRENT_TIMESTAMP is UTC).
    const exported = [];
    for await (const item of store.transfer.exportSession(snap.chatId)) exported.push(item);
    const u1 = exported.find((i) => i.kind === "message" && i.message.id === "u1");
    assert.equal(u1?.kind === "message" && u1.message.createdAt, `${u1Time.replace(" ", "T")}.000Z`);
    await store.close();

    // Opening again does nothing (the adoption is recorded), and the source tables were never touched.
    const again = new SqliteStore(path);
    assert.equal(again.adopted, null);
    await assertAdopted(again, snap);
    // An explicit run is idempotent: everything is skipped and verified again.
    const rerun = await again.adoptReference();
    assert.deepEqual(rerun?.messages, { inserted: 0, skipped: 10 });
    assert.equal(rerun?.verified, 17);
    assert.equal(rerun?.differingCount, 0);
    // Usage that grew and an end reason set since are not differences; a registry row changed otherwise is.
    await again.registry.addUsage(snap.chatId, {
      inputTokens: 5,
      outputTokens: 5,
      cost: 0.5,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    await again.registry.markEnded(snap.chatId, "done");
    assert.equal((await again.adoptReference())?.differingCount, 0);
    await again.registry.rename(snap.forkId, "renamed since");
    const renamed = await again.adoptReference();
    assert.deepEqual(renamed?.differing, [`assistant_sessions:${snap.forkId}`]);
    assert.equal(renamed?.verified, 16);
    await again.registry.rename(snap.forkId, "forked chat");
    await again.close();
    const db = new Database(path);
    assert.deepEqual(sourceCounts(db), before);
    db.close();
  });

  test("a Durable Object's storage (sql tag) is adopted in place, and the source dropped only on request", async () => {
    const agent = sqlTagAgent();
    const snap = await writeReferenceSqlite(agent);
    const store = new SqliteStore(agent);
    assert.equal(store.adopted?.messages.inserted, 10);
    await assertAdopted(store, snap);
    // Not clean (one row could not be adopted): dropping is refused, nothing is lost.
    await assert.rejects(store.adoptReference({ dropSource: true }), { code: "CONFLICT" });
    assert.equal(sourceCounts(agent.db).assistant_messages, 11);

    const clean = sqlTagAgent();
    const cleanSnap = await writeReferenceSqlite(clean, { reserved: false });
    const cleanStore = new SqliteStore(clean);
    const dropped = await cleanStore.adoptReference({ dropSource: true });
    assert.equal(dropped?.dropped, true);
    const left = clean.db
      .prepare("SELECT name FROM sqlite_master WHERE name LIKE 'assistant%' OR name LIKE 'cf_agents%'")
      .all();
    assert.deepEqual(left, []);
    await assertAdopted(cleanStore, cleanSnap);
  });

  test("inline media in the reference's rows is offloaded once, restored exactly and verified", async () => {
    const agent = sqlTagAgent();
    const url = `data:image/png;base64,${bytesOf(300_000, 31).toString("base64")}`;
    const image = (id: string) => imageMessage(id, url);
    const reference = ref.Session.create(new ref.AgentSessionProvider(agent as never));
    await reference.appendMessage(image("i1"));
    await reference.appendMessage(text("t1", "nice"));
    await reference.appendMessage(image("i2"));
    const store = new SqliteStore(agent);
    const report = store.adopted;
    assert.deepEqual(report?.messages, { inserted: 3, skipped: 0 });
    assert.equal(report?.differingCount, 0);
    assert.equal(report?.verified, 3);
    assert.deepEqual(await store.attachments.stats(), { count: 1, bytes: 300_000 });
    const s = store.session("");
    assert.equal(JSON.stringify(await s.getMessage("i2")), JSON.stringify(image("i2")));
    assert.deepEqual(
      (await s.getHistory()).map((m) => JSON.stringify(m)),
      [image("i1"), text("t1", "nice"), image("i2")].map((m) => JSON.stringify(m)),
    );
    const rows = await s.getHistoryRowStats!();
    assert.ok(Math.max(...rows.map((r) => r.bytes)) < 1000, "the rows hold pointers");
    // Adopting again skips and verifies; so does a row an earlier version adopted with its media inline.
    const [raw] = agent.db.prepare("SELECT content FROM assistant_messages WHERE id = 'i1'").all() as {
      content: string;
    }[];
    agent.db.prepare("UPDATE agent_messages SET content = ? WHERE id = 'i1'").run(raw!.content);
    const again = await store.adoptReference();
    assert.deepEqual(again?.messages, { inserted: 0, skipped: 3 });
    assert.equal(again?.differingCount, 0);
    assert.equal(again?.verified, 3);
    await s.clearMessages();
    assert.deepEqual(await store.attachments.stats(), { count: 0, bytes: 0 });
    await store.close();
  });

  test("a read-only connection opens without adopting; the next writable open adopts", async () => {
    const path = join(dir, "readonly.db");
    const agent = sqlTagAgent(path);
    const snap = await writeReferenceSqlite(agent);
    agent.db.close();
    // Adopted by this first open; forgetting the record makes the next open see the tables as not adopted yet.
    const first = await warningsOf("AgentSessionAdoptWarning", () => new SqliteStore(path).close());
    assert.match(first[0]?.message ?? "", /left in place \(details: agent-session adopt --db <file>\)$/);
    const raw = new Database(path);
    raw.prepare("DELETE FROM agent_adoptions").run();
    raw.close();
    const handle = new Database(path, { readonly: true });
    let reader: SqliteStore | undefined;
    const warned = await warningsOf("AgentSessionAdoptWarning", () => {
      reader = new SqliteStore(handle);
    });
    assert.ok(reader);
    assert.equal(reader.adopted, null);
    assert.deepEqual(
      warned.map((w) => w.message),
      [
        "this read-only connection cannot adopt the reference's tables found in the database; open it writable once (or run agent-session adopt)",
      ],
    );
    await reader.close();
    handle.close();
    const writer = new SqliteStore(path);
    assert.equal(writer.adopted?.messages.skipped, 10);
    await assertAdopted(writer, snap);
    await writer.close();
  });

  test("a database without the reference's tables costs one probe and records nothing", async () => {
    const store = new SqliteStore(":memory:");
    assert.equal(store.adopted, null);
    assert.equal(await store.adoptReference(), null);
    await store.close();
  });

  test("two processes opening the same file at once adopt it exactly once", async () => {
    const path = join(dir, "concurrent.db");
    const agent = sqlTagAgent(path);
    const snap = await writeReferenceSqlite(agent);
    agent.db.close();
    const script = join(import.meta.dirname, "../fixtures/adopt-open.ts");
    const run = () => runFixture(script, [path]);
    const reports = (await Promise.all([run(), run()])).map((out) => JSON.parse(out));
    // Each process verified every row; between them every message was inserted once.
    const inserted = reports.reduce((sum, r) => sum + (r?.messages.inserted ?? 0), 0);
    assert.equal(inserted, 10);
    const store = new SqliteStore(path);
    await assertAdopted(store, snap);
    const db = new Database(path);
    assert.equal((db.prepare("SELECT COUNT(*) AS n FROM agent_messages").get() as { n: number }).n, 10);
    assert.equal((db.prepare("SELECT COUNT(*) AS n FROM agent_adoptions").get() as { n: number }).n, 1);
    db.close();
    await store.close();
  });
});
