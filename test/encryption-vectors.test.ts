// Hybrid recall and encryption at rest (docs/PRIVACY.md, "Vectors"): an encrypted owner's messages get no vector,
// since an embedding stored in clear gives its text away. Its text never reaches the embedder, backfill leaves
// nothing pending for it, the vector channel never answers it, and a search of the owner still finds its messages
// through the keyed blind index, while an owner without a key is embedded and found by meaning as before.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import type { StoreVectors } from "../src/search/vectors/channel.js";
import type { Embedder } from "../src/search/vectors/types.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";
import { citusSchema } from "./fixtures/citus-db.js";
import { newPGlite } from "./fixtures/pglite.js";
import { pgliteSwitchedOff } from "./fixtures/postgres-db.js";
import { randomKeyring, SECRET } from "./helpers/encryption.js";
import { testEmbedder } from "./vectors/embedder.js";

type VectorStore = SqliteStore | PostgresStore;

async function checkNoVectorsForTheKeyedOwner(open: (embedder: Embedder) => Promise<VectorStore>) {
  const { embed, state } = testEmbedder();
  const seen: string[] = [];
  const store = await open((texts) => {
    seen.push(...texts);
    return embed(texts);
  });
  try {
    const manager = SessionManager.create(store);
    const { id: alice } = await manager.create("alice", { owner: "alice" });
    const { id: bob } = await manager.create("bob", { owner: "bob" });
    await manager.append(alice, msg("a1", `I drive a car to the ${SECRET} clinic`));
    await manager.append(bob, msg("b1", "I drive a car to work"));
    const vectors = store.vectors as StoreVectors;
    await vectors.backfill();
    assert.equal((await vectors.status()).pending, 0, "nothing of alice's waits for a vector");
    assert.ok(state.texts > 0, "bob's message was embedded");
    assert.ok(!seen.some((text) => text.includes(SECRET)), "alice's text never reached the embedder");
    const near = await vectors.nearestMessages("automobile", { limit: 5 });
    assert.deepEqual(
      near.map((n) => n.messageId),
      ["b1"],
      "the vector channel answers bob's message by meaning, never alice's",
    );
    const found = await store.searchMessages(SECRET, { owner: "alice" });
    assert.deepEqual(
      found.map((h) => h.id),
      ["a1"],
      "alice's message is found through the blind index",
    );
  } finally {
    await store.close();
  }
}

test("SQLite: an encrypted owner's messages get no vector and are found through the blind index", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-sealed-vectors-"));
  try {
    await checkNoVectorsForTheKeyedOwner(
      async (embedder) => new SqliteStore(join(dir, "s.db"), { embedder, keyring: randomKeyring(["alice"]) }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("PGlite: an encrypted owner's messages get no vector and are found through the blind index", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    await checkNoVectorsForTheKeyedOwner((embedder) =>
      PostgresStore.open(db, { embedder, keyring: randomKeyring(["alice"]) }),
    );
  } finally {
    await db.close();
  }
});

// The same on a Citus cluster (one distributed schema: test/fixtures/citus-db.ts), where the vector table is
// distributed by session beside the messages; skipped, with the reason printed, without a cluster.
const cluster = await citusSchema("encryption_vectors");
test(
  "Citus: an encrypted owner's messages get no vector and are found through the blind index",
  cluster ? {} : { skip: "no Citus cluster (the reason is printed above)" },
  async () => {
    if (!cluster) return;
    await checkNoVectorsForTheKeyedOwner(async (embedder) => {
      const store = cluster.store({ embedder, keyring: randomKeyring(["alice"]) });
      await store.ready();
      return store;
    });
  },
);
