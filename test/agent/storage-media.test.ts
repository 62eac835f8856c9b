// Agent sessions keep media once: an image sent in a turn is offloaded to the storage's attachment table, not
// stored inline in every saved state, and comes back as it was sent.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import type { AgentMessage } from "../../src/agent/index.js";
import { SQLiteSessionStorage } from "../../src/agent/storage/sqlite.js";
import { loadBetterSqlite3 } from "../../src/sqlite/better-sqlite3.js";
import { tempDir } from "../cli/helpers.js";
import { sampleState } from "./helpers/fixtures.js";

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

function payloads(file: string): { count: number; bytes: number; largestRow: number } {
  const Database = loadBetterSqlite3();
  const db = new Database(file, { readonly: true });
  try {
    const stored = db
      .prepare(
        "SELECT COUNT(DISTINCT hash) AS count, IFNULL(SUM(length(data)), 0) AS bytes FROM agent_chat_attachments",
      )
      .get() as { count: number; bytes: number };
    const largest = db.prepare("SELECT IFNULL(MAX(length(body)), 0) AS n FROM agent_chat_messages").get() as {
      n: number;
    };
    return { ...stored, largestRow: largest.n };
  } finally {
    db.close();
  }
}

test("SQLiteSessionStorage stores an image once across saves, appends and sessions, and releases it", async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, "agent.db");
  const storage = new SQLiteSessionStorage(file);
  try {
    const state = sampleState({ messages: [withImage("u1")] });
    await storage.save(state);
    await storage.appendMessages(state.id, [withImage("u2")], { updatedAt: state.updatedAt + 1 });
    await storage.save({ ...state, messages: [withImage("u1"), withImage("u2")] });
    const other = sampleState({ messages: [withImage("x1")] });
    await storage.save(other);
    const stored = payloads(file);
    assert.deepEqual([stored.count, stored.bytes], [1, 200_000]);
    assert.ok(stored.largestRow < 2000, `message rows hold pointers (${stored.largestRow} bytes)`);
    const loaded = await storage.load(state.id);
    const base64 = Buffer.from(image).toString("base64");
    assert.deepEqual(
      loaded?.messages.map((m) => (m.content as { image?: string }[])[1]?.image),
      [base64, base64],
    );
    await storage.delete(state.id);
    assert.equal(payloads(file).count, 1, "the other session still points at it");
    await storage.save({ ...other, messages: [] });
    assert.equal(payloads(file).count, 0);
  } finally {
    await storage.close();
    tmp.remove();
  }
});
