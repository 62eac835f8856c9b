// Who said it (docs/RECALL.md#who-said-it) for an encrypted owner: the author is read from the sealed message JSON,
// opened with the owner's key as a hit is, so the order is the same as in clear; no author is stored in clear.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { AUTHOR_QUESTIONS, seedAuthors } from "../src/testing/contract/author-recall.spec.js";
import { ids } from "../src/testing/contract/harness.js";
import { newPGlite } from "./fixtures/pglite.js";
import { pgliteSwitchedOff } from "./fixtures/postgres-db.js";
import { occurrences, randomKeyring } from "./helpers/encryption.js";
import { sqliteFiles } from "./helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-authors-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Each question's hits in a store whose session "a" is alice's (sealed where the store has her key). */
async function orders(store: RegistryCapableStore): Promise<string[][]> {
  await store.registry.create({ id: "a", name: "a", owner: "alice" });
  await seedAuthors(store);
  const out: string[][] = [];
  for (const [question] of AUTHOR_QUESTIONS)
    out.push(ids(await store.searchMessages(question, { sessionId: "a", authors: true })));
  return out;
}

test("SQLite: an encrypted owner's turns are ordered by their authors as the same turns in clear", async () => {
  const clear = new SqliteStore(join(dir, "clear.db"));
  const sealedPath = join(dir, "sealed.db");
  const sealed = new SqliteStore(sealedPath, { keyring: randomKeyring(["alice"]) });
  const expected = AUTHOR_QUESTIONS.map(([, order]) => order);
  assert.deepEqual(await orders(clear), expected);
  assert.deepEqual(await orders(sealed), expected);
  await clear.close();
  await sealed.close();
  for (const word of ["Caroline", "Melanie", "Dana Smith", "dusk"])
    assert.equal(occurrences(sqliteFiles(sealedPath), word), 0, `no "${word}" in the files`);
});

// In clear, the contract's spec holds the same orders on every backend.
test("PGlite: an encrypted owner's turns are ordered by their authors as the same turns in clear", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const store = await PostgresStore.open(await newPGlite(), { keyring: randomKeyring(["alice"]) });
  try {
    assert.deepEqual(
      await orders(store),
      AUTHOR_QUESTIONS.map(([, order]) => order),
    );
  } finally {
    await store.close();
  }
});
