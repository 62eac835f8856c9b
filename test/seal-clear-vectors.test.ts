// Sealing an owner's clear history drops the vectors of its messages (docs/PRIVACY.md, "Sealing an owner's clear
// history"): an encrypted owner's messages get no vector, so those embedded while alice was in clear go with the run
// that seals them; bob's stay, the vector channel no longer answers alice's, and her search finds them through the
// blind index. SQLite (sqlite-vec's table drained by the purge) and PGlite (pgvector).
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
import type { Keyring } from "../src/store/crypto/keyring.js";
import { msg } from "../src/testing/contract/harness.js";
import { newPGlite } from "./fixtures/pglite.js";
import { pgliteSwitchedOff } from "./fixtures/postgres-db.js";
import { aliceKeyring, newKey } from "./helpers/rekey-places.js";
import { sqlTagAgent } from "./helpers/sql-tag.js";
import { testEmbedder } from "./vectors/embedder.js";

type VectorStore = SqliteStore | PostgresStore;

async function dropsAlicesVectors(
  open: (embedder: Embedder, keyring?: Keyring) => Promise<VectorStore>,
  stored: () => Promise<number>,
) {
  const { embed } = testEmbedder();
  const plain = await open(embed);
  try {
    const manager = SessionManager.create(plain);
    const { id: alice } = await manager.create("alice", { owner: "alice" });
    const { id: bob } = await manager.create("bob", { owner: "bob" });
    await manager.append(alice, msg("a1", "I drive a car to the clinic"));
    await manager.append(bob, msg("b1", "I drive a car to work"));
    await (plain.vectors as StoreVectors).backfill();
    const near = await (plain.vectors as StoreVectors).nearestMessages("automobile", { limit: 5 });
    assert.deepEqual(near.map((n) => n.messageId).sort(), ["a1", "b1"], "both were embedded in clear");
    assert.equal(await stored(), 2);
  } finally {
    await plain.close();
  }
  const store = await open(embed, aliceKeyring(newKey()));
  try {
    await store.rekey("alice", { sealClear: true });
    assert.equal(await stored(), 1, "alice's vector row is gone, bob's is kept");
    const vectors = store.vectors as StoreVectors;
    await vectors.backfill();
    assert.equal((await vectors.status()).pending, 0, "nothing of alice's waits for a vector again");
    const near = await vectors.nearestMessages("automobile", { limit: 5 });
    assert.deepEqual(
      near.map((n) => n.messageId),
      ["b1"],
      "the vector channel answers bob's message only",
    );
    const found = await store.searchMessages("clinic", { owner: "alice" });
    assert.deepEqual(
      found.map((h) => h.id),
      ["a1"],
      "alice's message is found through the blind index",
    );
    await store.purge();
  } finally {
    await store.close();
  }
}

test("SQLite: sealClear drops the vectors of the owner's messages", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-seal-clear-vectors-"));
  try {
    const path = join(dir, "s.db");
    await dropsAlicesVectors(
      async (embedder, keyring) => new SqliteStore(path, { embedder, ...(keyring ? { keyring } : {}) }),
      async () => {
        const { db } = sqlTagAgent(path);
        try {
          return (db.prepare("SELECT count(*) AS n FROM agent_message_vectors").get() as { n: number }).n;
        } finally {
          db.close();
        }
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("PGlite: sealClear drops the vectors of the owner's messages", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    await dropsAlicesVectors(
      (embedder, keyring) => PostgresStore.open(db, { embedder, ...(keyring ? { keyring } : {}) }),
      async () => {
        const { rows } = await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM agent_message_vectors",
        );
        return rows[0]!.n;
      },
    );
  } finally {
    await db.close();
  }
});
