/**
 * The keyless contract's check of search entries' keys (docs/PRIVACY.md, "Search entries"): an owner with a key
 * writes an entry through `set_context` (its key made from the content: the slug of its first words and a hash) and
 * one through the block API with an app's own key; neither key, nor the slug, is anywhere in the storage, while the
 * model and the app read the real keys (the tool's answer, search hits, a store opened again). An owner in clear
 * writes the same: his keys are stored as they are, and the scan finds them, so the check is not vacuous.
 */
import assert from "node:assert/strict";
import { EntrySearchProvider } from "../../context/providers.js";
import { hasContextStorage } from "../../contract/context.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import { SessionManager } from "../../manager/manager.js";
import { Session } from "../../session/session.js";
import { entryKey, slugify } from "../../store/entry-key.js";
import type { Suite } from "../runner.js";
import type { DigestStorage } from "./keyed-ids.js";
import { randomKeyring } from "./keyless-writes.js";

/** What one owner wrote: the keys the tool and the app used, and the slug the tool's key starts with. */
interface Keys {
  label: string;
  tool: string;
  slug: string;
  app: string;
}

/** Writes an entry through set_context (no title: the key is the content's) and one through the block API. */
async function writeEntries(store: RegistryCapableStore, owner: string, word: string): Promise<Keys> {
  const { id } = await SessionManager.create(store).create(`${owner} notes`, { owner });
  const label = `notes_${id}`;
  if (!hasContextStorage(store)) throw new Error("the keyless contract's entry check needs context storage");
  const session = Session.create(store)
    .forSession(id)
    .withContext("notes", {
      description: "Notes",
      provider: new EntrySearchProvider(store.entries, label, { sessionId: id }),
    });
  const content = `my bank pin is ${word} 4321 and it opens the vault`;
  const tool = entryKey(content);
  const tools = await session.tools();
  assert.equal(
    await tools.set_context!.execute({ label: "notes", content }),
    `Indexed "${tool}" in notes.`,
    "the model reads the real key",
  );
  const app = `${owner}-app-key-${word}-door-code`;
  await session.setSearchEntry("notes", app, `the door code of ${owner}`);
  await assertReadable(store, label, { label, tool, slug: slugify(content), app });
  return { label, tool, slug: slugify(content), app };
}

/** The entries' search answers the real keys, and the search tool shows them. */
async function assertReadable(store: RegistryCapableStore, label: string, keys: Keys): Promise<void> {
  if (!hasContextStorage(store)) return;
  const hits = await store.entries.searchEntries(label, "vault door pin code");
  assert.deepEqual(
    hits.map((hit) => hit.key).sort(),
    [keys.app, keys.tool].sort(),
    "search answers real keys",
  );
  assert.equal(await store.entries.countEntries(label), 2);
}

/** Registers the scan for an encrypted owner's entry keys. */
export function registerEntryKeys(suite: Suite, create: () => Promise<DigestStorage>): void {
  suite.test("alice's entry keys (set_context's and an app's) are nowhere in the storage", async (t) => {
    const instance = await create();
    try {
      const ring = randomKeyring(["alice"]);
      let alice: Keys;
      let bob: Keys;
      const keyed = await instance.open(ring);
      try {
        if (!hasContextStorage(keyed)) {
          t.skip("the store keeps no search entries");
          return;
        }
        alice = await writeEntries(keyed, "alice", "zqxalicepinq");
        // Written again: the same key finds its row (no second one).
        await keyed.entries.setEntry(alice.label, alice.app, "the door code of alice, changed", {
          sessionId: alice.label.slice("notes_".length),
        });
        assert.equal(
          await keyed.entries.countEntries(alice.label),
          2,
          "a key written again replaces its row",
        );
        bob = await writeEntries(keyed, "bob", "zqxbobpinq");
      } finally {
        await keyed.close();
      }
      const reopened = await instance.open(ring);
      try {
        await assertReadable(reopened, alice.label, alice);
      } finally {
        await reopened.close();
      }
      const found: string[] = [];
      for (const [what, text] of Object.entries({ ...alice, label: undefined }))
        if (text !== undefined && (await instance.traces(text)) > 0) found.push(`${what}: ${text}`);
      if ((await instance.traces("zqxalicepinq")) > 0) found.push("the word of her key");
      assert.deepEqual(found, [], "alice's entry keys in the storage");
      for (const text of [bob.tool, bob.app])
        assert.ok((await instance.traces(text)) > 0, `bob's key in clear is found: ${text}`);
    } finally {
      await instance.close();
    }
  });
}
