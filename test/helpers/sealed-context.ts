// What the sealed-context tests share (test/encryption-blocks.test.ts): an encrypted owner's blocks, prompt,
// memory-tool directory and entries beside another owner's in clear, and their read-back.
import assert from "node:assert/strict";
import { memoryDirectoryKey } from "../../src/context/block-keys.js";
import { EntrySearchProvider } from "../../src/context/providers.js";
import type { ContextCapableStore } from "../../src/contract/context.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import type { TransferCapableStore } from "../../src/contract/transfer.js";
import { SessionManager } from "../../src/manager/manager.js";
import { Session } from "../../src/session/session.js";

/** A store that holds blocks, entries and a registry, and transfers. */
export type Store = ContextCapableStore & RegistryCapableStore & TransferCapableStore;

/** Words that must never be in the store's bytes for alice (each one token, as an index keeps terms). */
export const BLOCK_SECRET = "zqxblocksecretq";
export const ENTRY_SECRET = "zqxentrysecretq";
export const DIRECTORY_SECRET = "zqxdirectorysecretq";

/** A Session of `id` with an auto-wired block, its cached prompt and a search block filed under its key. */
export function contextSession(store: Store, id: string): Session {
  return Session.create(store)
    .withCachedPrompt()
    .withContext("memory")
    .withContext("facts", { provider: new EntrySearchProvider(store.entries, `facts_${id}`) })
    .forSession(id);
}

/** Alice (with a key) and bob (without) each get a block, a prompt, entries and a directory. */
export async function seed(store: Store) {
  const manager = SessionManager.create(store);
  const { id: alice } = await manager.create("alice chat", { owner: "alice" });
  const { id: bob } = await manager.create("bob chat", { owner: "bob" });
  const a = contextSession(store, alice);
  await a.replaceContextBlock("memory", `alice likes ${BLOCK_SECRET}`);
  await a.freezeSystemPrompt();
  const facts = new EntrySearchProvider(store.entries, `facts_${alice}`);
  await facts.set("diet", `alice eats ${ENTRY_SECRET} daily`);
  await facts.set("pets", "alice deploys cats and a deployment of dogs");
  await facts.set("café", "alice drinks a café crème");
  await store.blocks.setBlock(memoryDirectoryKey("owner", "alice"), `notes ${DIRECTORY_SECRET}`);
  const b = contextSession(store, bob);
  await b.replaceContextBlock("memory", "bob plain block");
  await new EntrySearchProvider(store.entries, `facts_${bob}`).set("diet", "bob plain entry");
  return { manager, alice, bob, a };
}

/** What a reader sees of alice's context: the block, the prompt, the directory and entry searches. */
export async function assertAliceReads(store: Store, alice: string) {
  assert.equal(await store.blocks.getBlock(`memory_${alice}`), `alice likes ${BLOCK_SECRET}`);
  const prompt = await store.blocks.getBlock(`_system_prompt_${alice}`);
  assert.ok(prompt?.includes(BLOCK_SECRET), "the frozen prompt opens");
  assert.equal(
    await store.blocks.getBlock(memoryDirectoryKey("owner", "alice")),
    `notes ${DIRECTORY_SECRET}`,
  );
  const label = `facts_${alice}`;
  assert.equal(await store.entries.countEntries(label), 3);
  assert.deepEqual(await store.entries.searchEntries(label, ENTRY_SECRET), [
    { key: "diet", content: `alice eats ${ENTRY_SECRET} daily` },
  ]);
  // Word families, phrases, accents and keys are found as in clear.
  assert.deepEqual(
    (await store.entries.searchEntries(label, "deploy")).map((h) => h.key),
    ["pets"],
  );
  assert.deepEqual(
    (await store.entries.searchEntries(label, '"cats and"')).map((h) => h.key),
    ["pets"],
  );
  assert.deepEqual(
    (await store.entries.searchEntries(label, "creme")).map((h) => h.key),
    ["café"],
  );
  assert.deepEqual(
    (await store.entries.searchEntries(label, "diet")).map((h) => h.key),
    ["diet"],
  );
}

/** Queries whose hits (and their order) must be the same for an encrypted owner's entries as in clear. */
const SAME_AS_CLEAR = [
  ENTRY_SECRET,
  "alice",
  "alice cats",
  "deploy",
  "deploy*",
  "dep*",
  "deployments",
  '"cats and"',
  '"and a deployment"',
  "creme",
  "café",
  "diet",
  "pets daily",
  "nothing",
];

/** Alice's entry searches in `sealed` (a store with her key) answer as in `clear` (the same seed, no keyring). */
export async function assertSameHitsAsClear(sealed: Store, alice: string, clear: Store, clearAlice: string) {
  for (const query of SAME_AS_CLEAR) {
    const inClear = await clear.entries.searchEntries(`facts_${clearAlice}`, query);
    const found = await sealed.entries.searchEntries(`facts_${alice}`, query);
    assert.deepEqual(found, inClear, query);
  }
  // The queries do tell entries apart (a comparison of empty answers would prove nothing).
  const all = await clear.entries.searchEntries(`facts_${clearAlice}`, "alice");
  assert.equal(all.length, 3);
}
