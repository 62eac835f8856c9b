// Agent sessions keep media once: an image sent in a turn is offloaded to the store's attachment table (SQLite,
// Postgres and a MemoryStore alike, since agent messages are store messages), not stored inline in every saved
// state, and comes back as it was sent.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import pg from "pg";
import type { AgentMessage } from "../../src/agent/index.js";
import { PostgresSessionStorage } from "../../src/agent/storage/postgres.js";
import { SQLiteSessionStorage } from "../../src/agent/storage/sqlite.js";
import { type StoreSessionStorage, storeSessionStorage } from "../../src/agent/storage/store.js";
import { hasAttachmentStore } from "../../src/contract/attachments.js";
import { MemoryStore } from "../../src/memory/store.js";
import { sampleState } from "../../src/testing/storage/fixtures.js";
import { tempDir } from "../cli/helpers.js";
import { PG_URL, postgresUnavailable } from "../fixtures/postgres-db.js";

const image = new Uint8Array(200_000).fill(7);

function withImage(id: string): AgentMessage {
  return {
    id,
    createdAt: 1_700_000_000_000,
    role: "user",
    content: [
      { type: "text", text: "what is in this picture?" },
      { type: "image", image, mediaType: "image/png" },
    ],
  } as AgentMessage;
}

async function payloads(storage: StoreSessionStorage): Promise<{ count: number; bytes: number }> {
  const store = await storage.store();
  assert.ok(hasAttachmentStore(store));
  return store.attachments.stats();
}

/** The largest stored message JSON of a session (pointers, not payloads). */
async function largestRow(storage: StoreSessionStorage, id: string): Promise<number> {
  const store = await storage.store();
  const stats = (await store.session(id).getHistoryRowStats?.()) ?? [];
  return Math.max(0, ...stats.map((row) => row.bytes));
}

async function imageStoredOnce(storage: StoreSessionStorage): Promise<void> {
  const state = sampleState({ messages: [withImage("u1")] });
  await storage.save(state);
  await storage.appendMessages!(state.id, [withImage("u2")], { updatedAt: state.updatedAt + 1 });
  await storage.save({ ...state, messages: [withImage("u1"), withImage("u2")] });
  const other = sampleState({ messages: [withImage("x1")] });
  await storage.save(other);
  assert.deepEqual(await payloads(storage), { count: 1, bytes: 200_000 }, "one copy of the image");
  const largest = await largestRow(storage, state.id);
  assert.ok(largest < 4000, `message rows hold pointers (${largest} bytes)`);
  const loaded = await storage.load(state.id);
  const base64 = Buffer.from(image).toString("base64");
  assert.deepEqual(
    loaded?.messages.map((m) => (m.content as { image?: string }[])[1]?.image),
    [base64, base64],
  );
  await storage.delete(state.id);
  assert.equal((await payloads(storage)).count, 1, "the other session still points at it");
  await storage.save({ ...other, messages: [] });
  assert.equal((await payloads(storage)).count, 0);
}

it("SQLiteSessionStorage stores an image once across saves, appends and sessions, and releases it", async () => {
  const tmp = tempDir();
  const storage = new SQLiteSessionStorage(join(tmp.dir, "agent.db"));
  try {
    await imageStoredOnce(storage);
  } finally {
    await storage.close();
    tmp.remove();
  }
});

it("storeSessionStorage(MemoryStore) stores an image once across saves, appends and sessions, and releases it", async () => {
  const store = new MemoryStore();
  try {
    await imageStoredOnce(storeSessionStorage(store));
  } finally {
    await store.close();
  }
});

const unavailable = await postgresUnavailable();
describe("PostgresSessionStorage media", { skip: unavailable ?? false }, () => {
  const schema = `agent_media_${process.pid}`;
  after(async () => {
    if (unavailable) return;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it("stores an image once across saves, appends and sessions, and releases it", async () => {
    const storage = new PostgresSessionStorage(PG_URL, { schema });
    try {
      await imageStoredOnce(storage);
    } finally {
      await storage.close();
    }
  });
});
