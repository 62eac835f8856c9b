// `agent-session embed`: backfills the vector channel of an existing store from an embedder module, with progress.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { SqliteStore } from "../../src/sqlite/store.js";
import { msg } from "../../src/testing/contract/harness.js";
import { testEmbedder } from "../vectors/embedder.js";
import { runCli, tempDir } from "./helpers.js";

const tmp = tempDir("agent-session-embed-");
after(() => tmp.remove());
const helper = pathToFileURL(new URL("../vectors/embedder.ts", import.meta.url).pathname).href;
const good = tmp.path("embedder.mjs");
writeFileSync(
  good,
  `import { testVector } from ${JSON.stringify(helper)};\nexport default async (texts) => texts.map(testVector);\n`,
);
// The good embedder imports the TypeScript test embedder, which only the CLI's sources run through tsx can load.
const viaTsx = { source: true };
const broken = tmp.path("broken.mjs");
writeFileSync(broken, `export const embedder = async () => { throw new Error("quota exceeded"); };\n`);
const empty = tmp.path("empty.mjs");
writeFileSync(empty, "export const nothing = 1;\n");

async function seededDb(name: string): Promise<string> {
  const db = tmp.path(name);
  const store = new SqliteStore(db);
  const s = store.session("s");
  await s.appendMessage(msg("car", "I finally bought a new sedan yesterday"));
  await s.appendMessage(msg("doc", "The physician said my knee heals well"));
  await s.appendMessage(msg("food", "Dinner was pasta with tomatoes"));
  await store.close();
  return db;
}

test("embed backfills a store made without vectors, with a progress bar, and finds by meaning afterwards", async () => {
  const db = await seededDb("store.db");
  const result = await runCli(
    ["embed", "--db", db, "--embedder", good, "--batch-size", "2", "--progress"],
    viaTsx,
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /^Embedded 3 messages \(0 failed\) into sqlite-vec; 3 have current vectors, 0 wait\.\n$/,
  );
  assert.match(result.stderr, /embed \[.*\] 100% \| 3\/3 messages/);
  const again = await runCli(["embed", "--db", db, "--embedder", good, "--json"], viaTsx);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(JSON.parse(again.stdout), {
    embedded: 0,
    failed: 0,
    index: "sqlite-vec",
    current: 3,
    pending: 0,
    refused: 0,
    failures: [],
  });
  const { embed } = testEmbedder();
  const store = new SqliteStore(db, { embedder: embed });
  try {
    const [seq] = await store.vectors!.nearest("automobile", { limit: 1 });
    assert.equal(
      store.driver.get<{ id: string }>("SELECT id FROM agent_messages WHERE seq = ?", [seq!])?.id,
      "car",
    );
  } finally {
    await store.close();
  }
});

test("embed --plain stores the vectors in the plain table", async () => {
  const db = await seededDb("plain.db");
  const result = await runCli(["embed", "--db", db, "--embedder", good, "--plain"], viaTsx);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /into sqlite-blob/);
});

test("embed reports an embedder that fails, a module without an embedder and a missing --embedder", async () => {
  const db = await seededDb("failing.db");
  const failing = await runCli(["embed", "--db", db, "--embedder", broken]);
  assert.equal(failing.code, 1);
  assert.match(failing.stdout, /Embedded 0 messages \(3 failed\)/);
  assert.match(failing.stderr, /^agent-session: 3 messages could not be embedded: quota exceeded\n$/);
  const none = await runCli(["embed", "--db", db, "--embedder", empty]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /must export an embedder/);
  const missing = await runCli(["embed", "--db", db]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /embed needs --embedder <module>/);
  const badBatch = await runCli(["embed", "--db", db, "--embedder", good, "--batch-size", "0"], viaTsx);
  assert.equal(badBatch.code, 2);
  assert.match(badBatch.stderr, /--batch-size must be a whole number >= 1/);
});
