// What the encryption-at-rest tests share: a keyring of per-owner random keys that can forget, a seeded store and
// its read-back on every backend, and counting a known plaintext in a store's files.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import type { SessionMessage } from "../../src/contract/message.js";
import type { SessionStore } from "../../src/contract/store.js";
import type { TransferCapableStore } from "../../src/contract/transfer.js";
import { SessionManager } from "../../src/manager/manager.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { msg } from "../../src/testing/contract/harness.js";

/** The plaintext that must never be in the files for an encrypted owner; one word, as the search index keeps terms. */
export const SECRET = "zqxsealedsecretq";

/** A keyring holding one random 32-byte key per owner, like an app's KMS-backed one; `forget` destroys a key. */
export function randomKeyring(owners: readonly string[]): Keyring & { keys: Map<string, Uint8Array> } {
  const keys = new Map(owners.map((owner) => [owner, crypto.getRandomValues(new Uint8Array(32))]));
  return {
    keys,
    key: (owner) => keys.get(owner),
    forget: (owner) => {
      const key = keys.get(owner);
      key?.fill(0);
      keys.delete(owner);
    },
  };
}

/** Occurrences of `text` (as UTF-8) in each of `paths` that exists, summed. */
export function occurrences(paths: readonly string[], text: string): number {
  const needle = Buffer.from(text, "utf8");
  let count = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const bytes = readFileSync(path);
    for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + 1)) count++;
  }
  return count;
}

/** Alice's i-th message: the secret inside a sentence. */
export const said = (i: number) => `alice says ${SECRET} number ${i}`;

/** The text of a message's first part. */
export const textOf = (m: SessionMessage | null | undefined) =>
  (m?.parts[0] as { text?: string } | undefined)?.text;

/** Alice (with a key) has a session of 6 messages with a branch; bob (no key) one plain message. */
export async function seedOwners(store: SessionStore) {
  const manager = SessionManager.create(store);
  const { id: alice } = await manager.create("alice chat", { owner: "alice" });
  for (let i = 0; i < 5; i++)
    await manager.append(alice, msg(`a${i}`, said(i), i % 2 ? "assistant" : "user"));
  await store.session(alice).appendMessage(msg("a5", said(5), "assistant"), "a3");
  const { id: bob } = await manager.create("bob chat", { owner: "bob" });
  await manager.append(bob, msg("b0", "bob plain words"));
  return { manager, alice, bob };
}

/**
 * Reads back alice's seeded session every way a provider reads, edits it (an identical edit writes nothing) and
 * exports it: an export holds the opened messages (the copy is the app's to protect).
 */
export async function assertReadsBack(store: SessionStore & TransferCapableStore, alice: string) {
  const provider = store.session(alice);
  assert.deepEqual((await provider.getHistory()).map(textOf), [0, 1, 2, 3, 5].map(said));
  assert.equal(textOf(await provider.getMessage("a4")), said(4));
  assert.equal(textOf(await provider.getLatestLeaf()), said(5));
  assert.deepEqual(
    (await provider.getBranches("a3")).map((m) => m.id),
    ["a4", "a5"],
  );
  assert.deepEqual(
    (await provider.getSiblings?.("a4"))?.siblings.map((m) => m.id),
    ["a4", "a5"],
  );
  assert.deepEqual(
    (await provider.getRecentHistory?.(undefined, 1e6))?.messages.map(textOf),
    [0, 1, 2, 3, 5].map(said),
  );
  const edited = msg("a0", "edited secret words");
  assert.equal(((await provider.updateMessage(edited)) as { updated: boolean }).updated, true);
  assert.equal(((await provider.updateMessage(edited)) as { updated: boolean }).updated, false);
  const exported = [];
  for await (const item of store.transfer.exportSession(alice)) exported.push(item);
  assert.ok(JSON.stringify(exported).includes(said(4)), "an export is opened");
}
