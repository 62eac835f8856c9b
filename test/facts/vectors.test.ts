// Facts in the vector channel (docs/FACTS.md#recall): a store with an embedder embeds each fact in the background,
// a search finds a fact by meaning (no word of the question in it) and lifts the turn it came from; the fact's vector
// lives in its row, so it goes with the fact (erasure, a delete of its sources); a store without an embedder keeps none.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { FactCapableStore } from "../../src/contract/facts.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import type { SearchItem } from "../../src/contract/search.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { factTables } from "../../src/sql/facts/postgres.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { fact, ownedSession } from "../../src/testing/contract/facts-harness.js";
import { newPGlite } from "../fixtures/pglite.js";
import { pgliteSwitchedOff } from "../fixtures/postgres-db.js";
import { randomKeyring } from "../helpers/encryption.js";
import { aliceKeyring, newKey } from "../helpers/rekey-places.js";
import { testEmbedder } from "../vectors/embedder.js";
import { channel, describeTargets, withStorage } from "../vectors/helpers.js";
import type { VectorStore } from "../vectors/targets.js";
import { postgresFactVectors } from "./vectors-count.js";

type Store = VectorStore & FactCapableStore & RegistryCapableStore;

// Turn u0 says nothing a query about cars shares, by words or by meaning; the fact learned from it does ("sedan").
async function seedFacts(store: Store): Promise<void> {
  await ownedSession(store, "a", null, [
    "Guess what I got at the dealership today",
    "Tell me about your week",
    "Dinner was pasta with tomatoes",
    "We talked about the weather",
  ]);
  await store.facts.add({ sessionId: "a" }, [fact("The user bought a new sedan.", [["a", "a-0"]])]);
  await store.facts.add({ sessionId: "a" }, [fact("The user ate pasta for dinner.", [["a", "a-2"]])]);
}

/** The facts among a search's items, in order. */
function factTexts(items: readonly SearchItem[]): string[] {
  return items.flatMap((item) => ("kind" in item ? [item.text] : []));
}

/** Facts holding a vector (not the "none" marker). */
async function factVectors(store: Store): Promise<number> {
  if (store instanceof SqliteStore) {
    const columns = store.driver.column<string>("SELECT name FROM pragma_table_info('agent_facts')");
    if (!columns.includes("embedding")) return 0;
    return store.driver.get<{ n: number }>(
      "SELECT count(*) AS n FROM agent_facts WHERE length(embedding) > 0",
    )?.n as number;
  }
  if (store instanceof MemoryStore) {
    const scopes = (store.facts as unknown as { scopes: Map<string, Map<string, { vector?: unknown }>> })
      .scopes;
    let n = 0;
    for (const scope of scopes.values()) for (const kept of scope.values()) if (kept.vector) n++;
    return n;
  }
  return postgresFactVectors(store);
}

test("an encrypted owner's facts get no vector on SQLite; a clear session's do", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "fact-vectors-"));
  const store = new SqliteStore(join(dir, "store.db"), {
    keyring: randomKeyring(["alice"]),
    embedder: testEmbedder().embed,
  });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await ownedSession(store, "a", "alice", ["Guess what I got at the dealership today"]);
  await ownedSession(store, "b", null, ["Guess what I got at the dealership today"]);
  await store.facts.add({ owner: "alice" }, [fact("The user bought a new sedan.", [["a", "a-0"]])]);
  await store.facts.add({ sessionId: "b" }, [fact("The user bought a new sedan.", [["b", "b-0"]])]);
  await channel(store).idle();
  const rows = store.driver.tuples<[string, number]>(
    "SELECT scope, length(embedding) FROM agent_facts ORDER BY seq",
  );
  assert.equal(rows.length, 2);
  assert.equal(rows[0]?.[1], 0, "her fact: the empty marker, no vector");
  assert.ok((rows[1]?.[1] ?? 0) > 0, "the clear session's fact has a vector");
  const hers = await store.searchMessages("automobile", { owner: "alice", limit: 5, facts: "hits" });
  assert.deepEqual(factTexts(hers), []);
});

test("an encrypted owner's facts get no vector on PGlite; a clear session's do", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const store = await PostgresStore.open(await newPGlite(), {
    keyring: randomKeyring(["alice"]),
    embedder: testEmbedder().embed,
  });
  try {
    await ownedSession(store, "a", "alice", ["Guess what I got at the dealership today"]);
    await ownedSession(store, "b", null, ["Guess what I got at the dealership today"]);
    await store.facts.add({ owner: "alice" }, [fact("The user bought a new sedan.", [["a", "a-0"]])]);
    await store.facts.add({ sessionId: "b" }, [fact("The user bought a new sedan.", [["b", "b-0"]])]);
    await channel(store).idle();
    const executor = await store.ready();
    const rows = await executor.query<{ scope: string; n: number }>(
      `SELECT scope, cardinality(embedding) AS n FROM ${factTables(store.tables).facts} ORDER BY seq`,
    );
    assert.deepEqual(
      rows.map((r) => [r.scope, Number(r.n)]),
      [
        ["o:alice", 0],
        ["s:b", 64],
      ],
    );
    const hers = await store.searchMessages("automobile", { owner: "alice", limit: 5, facts: "hits" });
    assert.deepEqual(factTexts(hers), []);
  } finally {
    await store.close();
  }
});

test("sealing an owner's clear history drops her facts' vectors on SQLite; another owner's stay", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "fact-vectors-seal-"));
  const path = join(dir, "store.db");
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const plain = new SqliteStore(path, { embedder: testEmbedder().embed });
  try {
    await ownedSession(plain, "a", "alice", ["Guess what I got at the dealership today"]);
    await ownedSession(plain, "b", "bob", ["Guess what I got at the dealership today"]);
    await plain.facts.add({ owner: "alice" }, [fact("The user bought a new sedan.", [["a", "a-0"]])]);
    await plain.facts.add({ owner: "bob" }, [fact("The user bought a new sedan.", [["b", "b-0"]])]);
    await channel(plain).idle();
    assert.equal(await factVectors(plain), 2);
  } finally {
    await plain.close();
  }
  const store = new SqliteStore(path, { embedder: testEmbedder().embed, keyring: aliceKeyring(newKey()) });
  try {
    await store.rekey("alice", { sealClear: true });
    const rows = store.driver.tuples<[string, number]>(
      "SELECT scope, length(embedding) FROM agent_facts ORDER BY seq",
    );
    assert.deepEqual(rows, [
      ["o:alice", 0],
      ["o:bob", 64 * 4],
    ]);
    const hers = await store.searchMessages("automobile", { owner: "alice", limit: 5, facts: "hits" });
    assert.deepEqual(factTexts(hers), []);
  } finally {
    await store.close();
  }
});

test("sealing an owner's clear history drops her facts' vectors on PGlite; another owner's stay", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const plain = await PostgresStore.open(db, { embedder: testEmbedder().embed });
    await ownedSession(plain, "a", "alice", ["Guess what I got at the dealership today"]);
    await ownedSession(plain, "b", "bob", ["Guess what I got at the dealership today"]);
    await plain.facts.add({ owner: "alice" }, [fact("The user bought a new sedan.", [["a", "a-0"]])]);
    await plain.facts.add({ owner: "bob" }, [fact("The user bought a new sedan.", [["b", "b-0"]])]);
    await channel(plain).idle();
    assert.equal(await postgresFactVectors(plain), 2);
    await plain.close();
    const store = await PostgresStore.open(db, {
      embedder: testEmbedder().embed,
      keyring: aliceKeyring(newKey()),
    });
    try {
      await store.rekey("alice", { sealClear: true });
      const executor = await store.ready();
      const rows = await executor.query<{ scope: string; n: number }>(
        `SELECT scope, cardinality(embedding) AS n FROM ${factTables(store.tables).facts} ORDER BY seq`,
      );
      assert.deepEqual(
        rows.map((r) => [r.scope, Number(r.n)]),
        [
          ["o:alice", 0],
          ["o:bob", 64],
        ],
      );
      const hers = await store.searchMessages("automobile", { owner: "alice", limit: 5, facts: "hits" });
      assert.deepEqual(factTexts(hers), []);
    } finally {
      await store.close();
    }
  } finally {
    await db.close();
  }
});

await describeTargets((target) => {
  test("a fact found by meaning lifts its source turn", async () => {
    await withStorage(target.fresh, async (storage) => {
      const store = (await storage.open({ embedder: testEmbedder().embed })) as Store;
      try {
        await seedFacts(store);
        await channel(store).idle();
        // No fact holds the word: the words alone find none.
        assert.deepEqual(await store.facts.search({ sessionId: "a" }, "automobile"), []);
        const hits = await store.searchMessages("automobile", { sessionId: "a", limit: 3 });
        assert.equal(hits[0]?.id, "a-0");
        const items = await store.searchMessages("automobile", { sessionId: "a", limit: 5, facts: "hits" });
        assert.equal(factTexts(items)[0], "The user bought a new sedan.");
        assert.equal(items[0]?.id, "a-0");
        // `vectors: false` leaves the facts' vectors out too: no fact holds the word.
        const words = await store.searchMessages("automobile", {
          sessionId: "a",
          limit: 5,
          facts: "hits",
          vectors: false,
        });
        assert.deepEqual(factTexts(words), []);
        // The vector read keeps to the sources the word search keeps to (an active path's ids, the session).
        const near = (await channel(store).queryVector("automobile")) as Float32Array;
        const onPath = await store.facts.nearby({ sessionId: "a" }, near, {
          sourceSession: "a",
          sourcesIn: ["a-2"],
        });
        assert.deepEqual(
          onPath.map((h) => h.fact.text),
          ["The user ate pasta for dinner."],
        );
        assert.deepEqual(await store.facts.nearby({ sessionId: "a" }, near, { sourceSession: "b" }), []);
      } finally {
        await store.close();
      }
    });
  });

  test("an erased session's facts take their vectors; a deleted source's fact too", async () => {
    await withStorage(target.fresh, async (storage) => {
      const store = (await storage.open({ embedder: testEmbedder().embed })) as Store;
      try {
        await seedFacts(store);
        await ownedSession(store, "b", null, ["Guess what I got at the dealership today"]);
        await store.facts.add({ sessionId: "b" }, [fact("The user bought a sedan too.", [["b", "b-0"]])]);
        await channel(store).idle();
        assert.equal(await factVectors(store), 3);
        await store.registry.erase?.("b");
        assert.equal(await factVectors(store), 2);
        await store.session("a").deleteMessages(["a-0"]);
        assert.equal(await factVectors(store), 1);
        const hits = await store.searchMessages("automobile", { sessionId: "a", limit: 5, facts: "hits" });
        assert.ok(!factTexts(hits).some((text) => text.includes("sedan")), JSON.stringify(factTexts(hits)));
      } finally {
        await store.close();
      }
    });
  });

  test("a store without an embedder keeps no fact vectors; one opened with it later embeds them by backfill", async () => {
    await withStorage(target.fresh, async (storage) => {
      const plain = (await storage.open({})) as Store;
      try {
        await seedFacts(plain);
        assert.equal(await factVectors(plain), 0);
      } finally {
        if (!target.reopens) await plain.close();
      }
      if (!target.reopens) return;
      await plain.close();
      const store = (await storage.open({ embedder: testEmbedder().embed })) as Store;
      try {
        await channel(store).backfill();
        assert.equal(await factVectors(store), 2);
        const hits = await store.searchMessages("automobile", { sessionId: "a", limit: 3 });
        assert.equal(hits[0]?.id, "a-0");
      } finally {
        await store.close();
      }
    });
  });
});
