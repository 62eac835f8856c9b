// Reference counts of shared payloads under concurrency (Postgres, several pool connections): a payload another
// session links while this one collects it must survive (upstream's #2232 deleted it), and the last release drops it.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { PostgresStore } from "../src/postgres/index.js";
import type { SessionMessage } from "../src/types.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

const SCHEMA = `agent_session_test_attachments_${process.pid}`;
const unavailable = await postgresUnavailable();
const url = `data:image/png;base64,${Buffer.alloc(30_000, 5).toString("base64")}`;

function withImage(id: string): SessionMessage {
  return {
    id,
    role: "user",
    parts: [{ type: "file", mediaType: "image/png", url }],
  } as unknown as SessionMessage;
}

test("linking and collecting the same payload at once never loses it", {
  skip: unavailable ?? false,
}, async () => {
  const pool = testPool(8);
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  });
  await dropSchema(pool, SCHEMA);
  const store = await PostgresStore.open(pool, { schema: SCHEMA });
  for (let round = 0; round < 25; round++) {
    // One row of "b" points at the payload; "a" appends a second pointer while "b" deletes (or clears) its own.
    await store.session("b").appendMessage(withImage(`b${round}`));
    await Promise.all([
      store.session("a").appendMessage(withImage(`a${round}`)),
      round % 2 === 0 ? store.session("b").deleteMessages([`b${round}`]) : store.session("b").clearMessages(),
      store.session(`c${round}`).appendMessage(withImage("c")),
      store.session(`c${round}`).clearMessages(),
    ]);
    const back = await store.session("a").getMessage(`a${round}`);
    assert.equal((back?.parts[0] as { url?: string } | undefined)?.url, url, `round ${round}`);
    assert.equal((await store.attachments.stats()).count, 1);
  }
  // The concurrent clears of "c…" may have run before their appends: those rows still hold the payload.
  for (let round = 0; round < 25; round++) {
    assert.equal((await store.attachments.stats()).count, 1);
    await store.session(`c${round}`).clearMessages();
  }
  await store.session("b").clearMessages();
  await store.session("a").clearMessages();
  assert.equal((await store.attachments.stats()).count, 0);
  await store.close();
});
