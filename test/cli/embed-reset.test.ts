// `agent-session embed`: the texts the embedder refused (count and newest reasons), --retry-failed, and --reset for a
// new embedding model (alone it only forgets the vectors; with --embedder it embeds every message again).
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { SqliteStore } from "../../src/sqlite/store.js";
import { msg } from "../../src/testing/contract/harness.js";
import { runCli, tempDir } from "./helpers.js";

const tmp = tempDir("agent-session-embed-reset-");
after(() => tmp.remove());
const helper = pathToFileURL(new URL("../vectors/embedder.ts", import.meta.url).pathname).href;
const good = tmp.path("embedder.mjs");
writeFileSync(
  good,
  `import { testVector } from ${JSON.stringify(helper)};\nexport default async (texts) => texts.map(testVector);\n`,
);
// Refuses any call with the pasta text in it (a content policy): isolated, that text alone is refused.
const picky = tmp.path("picky.mjs");
writeFileSync(
  picky,
  `import { testVector } from ${JSON.stringify(helper)};\n` +
    `export default async (texts) => {\n` +
    `  if (texts.some((t) => t.includes("pasta"))) throw new Error("content policy: no food");\n` +
    `  return texts.map(testVector);\n};\n`,
);
// The good embedder imports the TypeScript test embedder, which only the CLI's sources run through tsx can load.
const viaTsx = { source: true };

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

test("embed lists the refused texts with their reasons, keeps them until --retry-failed sends them again", async () => {
  const db = await seededDb("refused.db");
  const first = await runCli(["embed", "--db", db, "--embedder", picky], viaTsx);
  assert.equal(first.code, 1);
  assert.equal(
    first.stdout,
    "Embedded 2 messages (1 failed) into sqlite-vec; 2 have current vectors, 0 wait.\n" +
      "1 text refused by the embedder (sent again with --retry-failed or once changed):\n" +
      "  s food: content policy: no food\n",
  );
  const again = await runCli(["embed", "--db", db, "--embedder", picky, "--json"], viaTsx);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(JSON.parse(again.stdout), {
    embedded: 0,
    failed: 0,
    index: "sqlite-vec",
    current: 2,
    pending: 0,
    refused: 1,
    failures: [{ sessionId: "s", messageId: "food", reason: "content policy: no food" }],
  });
  const retried = await runCli(["embed", "--db", db, "--embedder", good, "--retry-failed"], viaTsx);
  assert.equal(retried.code, 0, retried.stderr);
  assert.equal(
    retried.stdout,
    "Embedded 1 message (0 failed) into sqlite-vec; 3 have current vectors, 0 wait.\n",
  );
});

test("embed --reset alone forgets the vectors, deletes work after it, and --reset --embedder embeds every message again", async () => {
  const db = await seededDb("reset.db");
  assert.equal((await runCli(["embed", "--db", db, "--embedder", good], viaTsx)).code, 0);
  const reset = await runCli(["embed", "--db", db, "--reset"]);
  assert.equal(reset.code, 0, reset.stderr);
  assert.match(
    reset.stdout,
    /^Forgot every vector: run embed --embedder <module> to embed the messages again\.\n$/,
  );
  const store = new SqliteStore(db);
  try {
    assert.deepEqual(
      store.driver.column(
        "SELECT name FROM sqlite_master WHERE name LIKE 'agent_message_vectors%' OR name = 'agent_vector_state'",
      ),
      [],
    );
    await store.session("s").deleteMessages(["doc"]);
  } finally {
    await store.close();
  }
  const again = await runCli(
    ["embed", "--db", db, "--reset", "--embedder", good, "--plain", "--json"],
    viaTsx,
  );
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(JSON.parse(again.stdout), {
    embedded: 2,
    failed: 0,
    index: "sqlite-blob",
    current: 2,
    pending: 0,
    refused: 0,
    failures: [],
    reset: true,
  });
  const both = await runCli(["embed", "--db", db, "--reset", "--retry-failed", "--embedder", good]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--retry-failed is implied by --reset/);
  const missing = await runCli(["embed", "--db", db, "--plain"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /embed needs --embedder <module> \(or --reset alone/);
});
