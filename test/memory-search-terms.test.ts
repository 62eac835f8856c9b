// The memory store's search data: a message's words are made once per version of its text (by the first search
// that reads it), kept for later searches, made again after a write that changes the text, and gone with the row;
// its length (the token estimate) is kept by every write path. The results stay those of the text as stored.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionMessage } from "../src/contract/message.js";
import type { MemoryMessageRow } from "../src/memory/data.js";
import { MemoryStore } from "../src/memory/store.js";
import { estimateMessageTokens } from "../src/message/tokens.js";

const msg = (id: string, text: string, role = "user"): SessionMessage => ({
  id,
  role: role as SessionMessage["role"],
  parts: [{ type: "text", text }],
});

function row(store: MemoryStore, sessionId: string, id: string): MemoryMessageRow | undefined {
  return store.sessionData(sessionId, false)?.rows.get(id);
}

const found = async (store: MemoryStore, query: string) =>
  (await store.searchMessages(query)).map((hit) => `${hit.sessionId}/${hit.id}`).sort();

test("a message's words are made once per version of its text, by the first search that reads it", async () => {
  const store = new MemoryStore();
  const s = store.session("s");
  await s.appendMessage(msg("m1", "Crème brûlée au café"));
  await s.appendMessage(msg("m2", "Déjà vu at the café", "assistant"));
  assert.equal(row(store, "s", "m1")!.terms, undefined, "an append does not tokenise");
  assert.deepEqual(await found(store, "cafe"), ["s/m1", "s/m2"]);
  const words = row(store, "s", "m1")!.terms;
  assert.ok(words, "the search kept the words it made");
  assert.deepEqual(await found(store, '"creme brulee"'), ["s/m1"]);
  assert.deepEqual(await found(store, "cafe creme"), ["s/m1", "s/m2"]);
  assert.equal(row(store, "s", "m1")!.terms, words, "later searches read the same words");

  // An update, an upsert that changes the message: the old words are dropped, the new text is what is found.
  await s.updateMessage(msg("m1", "Piñata mañana"));
  assert.equal(row(store, "s", "m1")!.terms, undefined);
  assert.deepEqual(await found(store, "creme"), []);
  assert.deepEqual(await found(store, "pinata"), ["s/m1"]);
  await s.upsertMessage(msg("m2", "Señor über alles", "assistant"));
  assert.deepEqual(await found(store, "cafe"), []);
  assert.deepEqual(await found(store, "senor"), ["s/m2"]);
  // An upsert of the same content keeps them.
  const kept = row(store, "s", "m2")!.terms;
  await s.upsertMessage(msg("m2", "Señor über alles", "assistant"));
  assert.equal(row(store, "s", "m2")!.terms, kept);

  // A delete takes them with the row; a clear with the session.
  await s.deleteMessages(["m2"]);
  assert.equal(row(store, "s", "m2"), undefined);
  assert.deepEqual(await found(store, "senor"), []);
  await s.clearMessages();
  assert.deepEqual(await found(store, "pinata"), []);
});

test("every write path keeps a message's token estimate, its length in ranked recall", async () => {
  const store = new MemoryStore();
  const s = store.session("w");
  const first = msg("a", "alpha beta gamma");
  await s.appendMessage(first);
  assert.equal(row(store, "w", "a")!.tokens, estimateMessageTokens([first]));
  const longer = msg("a", `alpha ${"x".repeat(1000)}`);
  await s.updateMessage(longer);
  assert.equal(row(store, "w", "a")!.tokens, estimateMessageTokens([longer]));
  const imported = msg("b", "delta epsilon", "assistant");
  await s.importMessage(imported, { parentId: "a" });
  assert.equal(row(store, "w", "b")!.tokens, estimateMessageTokens([imported]));

  // A session moved through the transfer (export, then import into another store) keeps the same estimates.
  const copy = new MemoryStore();
  const items = store.transfer.exportSession("w");
  await copy.transfer.importSession(items);
  for (const id of ["a", "b"]) assert.equal(row(copy, "w", id)!.tokens, row(store, "w", id)!.tokens, id);
  assert.deepEqual(await found(copy, "epsilon"), ["w/b"]);
});
