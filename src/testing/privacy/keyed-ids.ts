/**
 * The keyless contract's check of ids and hashes derived from content (docs/PRIVACY.md, "Ids derived from
 * content"): alice (with a key) writes through every path the store has (keyless-writes.ts `writesOf`), learns a
 * fact from her words with a scripted extractor, edits a message through the AI SDK door and appends an image; bob
 * (in clear) writes the same kinds. Then no byte of the storage holds an unkeyed digest of alice's content in any
 * form the code derives one (SHA-256 as hex or base64url, whole or cut, with or without the `fact_` or `<id>~`
 * prefix): not as a message's content hash, a learned fact's id, an edited message's id, a vector's text hash or a
 * payload's name. Bob's ids and his offloaded payload's name are the unkeyed forms they always were, and the scan
 * finds them, so the check is not vacuous (his content hashes are not asked for: a backend keeps them only where it
 * needs them). The digests the eve door derives its ids from
 * (`registry.ownerDigests`) are keyed for alice, none for bob.
 */
import assert from "node:assert/strict";
import { persistChatTurn } from "../../ai-sdk/chat-turn.js";
import { editedId } from "../../ai-sdk/edited-ids.js";
import { hasAttachmentStore } from "../../contract/attachments.js";
import { hasFactStore } from "../../contract/facts.js";
import type { SessionMessage } from "../../contract/message.js";
import type { OwnerDigest, RegistryCapableStore } from "../../contract/registry.js";
import type { CheckedFact } from "../../facts/check.js";
import { learnedFactIds } from "../../facts/consolidate.js";
import { learnFacts } from "../../facts/learn.js";
import { scopeOf } from "../../facts/session.js";
import type { ExtractInput } from "../../facts/types.js";
import { serializeMessage } from "../../message/json.js";
import { sha256Base64url, sha256Hex, utf8Encode } from "../../runtime/bytes.js";
import { Session } from "../../session/session.js";
import { offloadMessage } from "../../store/media/offload.js";
import { msg } from "../contract/harness.js";
import type { Suite } from "../runner.js";
import { ALICE_SECRET, randomKeyring, seedAlice, writesOf } from "./keyless-writes.js";
import type { ScannedStorage } from "./sealed-tables.js";

/** Characters of a digest the scan looks for: every form the code stores keeps at least these (64 bits). */
const PREFIX = 16;

/** What the scan needs of a keyless target's storage (keyless.ts KeylessInstance has it). */
export interface DigestStorage extends ScannedStorage {
  traces(text: string): Promise<number>;
}

/** One owner's writes: what each derivation's unkeyed form would be, and what the store keeps. */
interface Written {
  /** Every unkeyed digest (cut to {@link PREFIX}) of the owner's contents, in each form, by what it is of. */
  digests: Map<string, string>;
  /** The unkeyed ids and payload names kept for an owner in clear (cut to {@link PREFIX}), by what each is. */
  clear: Map<string, string>;
  /** The owner's ids as stored, by what each is. */
  ids: Map<string, string>;
}

/** A message's id the owner writes, its text starting "I " so the scripted extractor learns a fact from it. */
const SAID = "said";

/** The scripted extractor: one fact of each user message that says "I …", sourced from it. */
async function extract(input: ExtractInput) {
  return input.messages
    .filter((m) => m.role === "user" && m.text.startsWith("I "))
    .map((m) => ({ text: `The user says: ${m.text}`, about: "user", sources: [m.id] }));
}

/** The unkeyed digests of `input` in the code's forms: SHA-256 as hex and as base64url, each cut. */
function unkeyed(input: string): string[] {
  return [sha256Hex(utf8Encode(input)).slice(0, PREFIX), sha256Base64url(input).slice(0, PREFIX)];
}

/** Records the unkeyed digests of a message as stored: its JSON (the content hash) and its texts (vectors). */
function addMessage(written: Written, message: SessionMessage): void {
  // A message reads back as it was written: its JSON again, with its media offloaded where a store in clear offloads
  // it, is what a content hash in clear is of.
  const json = serializeMessage(message);
  const offloaded = offloadMessage(message, json).content;
  const texts = message.parts.flatMap((part) =>
    part.type === "text" ? [(part as { text: string }).text] : [],
  );
  const inputs: [string, string][] = [
    [json, "the content hash"],
    [offloaded, "the content hash"],
    ...texts.map((text): [string, string] => [text, "a text hash"]),
  ];
  if (texts.length > 1) inputs.push([texts.join("\n"), "a text hash"]);
  for (const [input, what] of inputs)
    for (const digest of unkeyed(input)) written.digests.set(digest, `${what} of message ${message.id}`);
}

/**
 * Appends an image over the size media is offloaded from: an owner in clear gets it offloaded under the SHA-256 of
 * its bytes (where the store offloads); an encrypted owner's stays inline, sealed, so no payload names its digest.
 */
async function addImage(written: Written, store: RegistryCapableStore, id: string, keyed: boolean) {
  const bytes = utf8Encode(`${keyed} `.repeat(120));
  const url = `data:image/png;base64,${btoa(String.fromCharCode(...bytes))}`;
  const image = { id: "image", role: "user", parts: [{ type: "file", mediaType: "image/png", url }] };
  await store.session(id).appendMessage(image as unknown as SessionMessage);
  for (const { hash } of offloadMessage(image, serializeMessage(image as SessionMessage)).attachments) {
    written.digests.set(hash.slice(0, PREFIX), "an image's payload name");
    if (!hasAttachmentStore(store)) continue;
    const stored = await store.attachments.get(hash);
    if (keyed)
      assert.equal(stored, null, "an encrypted owner's image is not offloaded (it stays sealed inline)");
    else if (stored !== null) written.clear.set(hash.slice(0, PREFIX), "an image's payload name");
  }
}

/** Reads `ids` of `sessionId` back and records their digests (a message not stored is left out). */
async function addStored(
  written: Written,
  store: RegistryCapableStore,
  sessionId: string,
  ids: readonly string[],
): Promise<void> {
  for (const id of ids) {
    const message = await store.session(sessionId).getMessage(id);
    if (message !== null) addMessage(written, message);
  }
}

/**
 * Writes `owner`'s session `<owner>-ids`: a message appended, one updated, an image, a fact learned from the first
 * (where the store keeps facts) and an edit of it through the AI SDK door. Answers what the unkeyed forms of each
 * would be and the ids stored, checking on the way that each id is what the owner's digests derive (unkeyed without
 * any).
 */
async function writeOwner(store: RegistryCapableStore, owner: string, text: string): Promise<Written> {
  const written: Written = { digests: new Map(), clear: new Map(), ids: new Map() };
  const digests: OwnerDigest[] = (await store.registry.ownerDigests?.(owner)) ?? [];
  const { id } = await store.registry.create({ id: `${owner}-ids`, name: "ids", owner });
  const provider = store.session(id);
  const said = `I keep ${text} in the attic`;
  await provider.appendMessage(msg(SAID, said));
  await provider.appendMessage(msg("reply", `noted ${text}`, "assistant"));
  await provider.updateMessage(msg("reply", `noted again ${text}`, "assistant"));
  await addImage(written, store, id, digests.length > 0);
  if (hasFactStore(store)) {
    const report = await learnFacts(store, { extractor: extract, sessionIds: [id] });
    assert.equal(report.added, 1, `${owner}'s fact is learned: ${JSON.stringify(report)}`);
    const scope = await scopeOf(store, id);
    const checked: CheckedFact = {
      text: `The user says: ${said}`,
      about: "user",
      sources: [SAID],
      action: null,
      target: null,
    };
    const [stored] = (await store.facts.list(scope)).facts;
    const expected = learnedFactIds(scope, id, checked, digests);
    assert.equal(stored?.id, expected[0], `${owner}'s learned fact has the id its owner's digests derive`);
    const plain = (expected.at(-1) as string).slice("fact_".length, "fact_".length + PREFIX);
    written.ids.set("a learned fact's id", expected[0] as string);
    written.digests.set(plain, "a learned fact's id");
    written.clear.set(plain, "a learned fact's id");
  }
  const session = Session.create(store).forSession(id);
  const edit = msg(SAID, `I keep ${text} in the cellar`);
  const turn = await persistChatTurn(session, { messages: [edit] as never });
  const editId = turn.parentId as string;
  assert.equal(editId, editedId(edit, digests[0]), `${owner}'s edit has the id its owner's digests derive`);
  written.ids.set("an edited message's id", editId);
  const plainEdit = editedId(edit).slice(`${SAID}~`.length).slice(0, PREFIX);
  written.digests.set(plainEdit, "an edited message's id");
  written.clear.set(plainEdit, "an edited message's id");
  await addStored(written, store, id, [SAID, "reply", "image", editId]);
  return written;
}

/**
 * The registry's digests, which the eve door names notes (`note\0<text>`) and captured messages (`message\0…`) with
 * (eve/ids.ts): alice's are keyed, none a SHA-256 of its input (with or without their own `id\0` domain); bob has
 * none, so his ids stay the SHA-256 they were.
 */
async function assertKeyedDigests(store: RegistryCapableStore): Promise<void> {
  assert.ok(store.registry.ownerDigests, "a store with encryption at rest answers owners' keyed digests");
  assert.deepEqual(await store.registry.ownerDigests("bob"), [], "an owner in clear has no keyed digest");
  const [digest] = await store.registry.ownerDigests("alice");
  assert.ok(digest, "an owner with a key has a keyed digest");
  for (const input of [
    `note\u0000I keep ${ALICE_SECRET}`,
    `message\u0000e1\u0000["user","${ALICE_SECRET}"]\u00000`,
  ]) {
    const plain = [sha256Hex(utf8Encode(input)), sha256Hex(utf8Encode(`id\u0000${input}`))];
    assert.ok(
      !plain.includes(digest(input)),
      `alice's digest of ${JSON.stringify(input)} is an unkeyed SHA-256`,
    );
  }
}

/** Registers the scan for unkeyed digests of an encrypted owner's content. */
export function registerKeyedIds(suite: Suite, create: () => Promise<DigestStorage>): void {
  suite.test(
    "alice's ids and content hashes are keyed: no unkeyed digest of her content in the storage",
    async () => {
      const instance = await create();
      try {
        const keyed = await instance.open(randomKeyring(["alice"]));
        let alice: Written;
        let bob: Written;
        try {
          const seeded = await seedAlice(keyed);
          for (const [what, write] of writesOf(keyed, seeded, ALICE_SECRET)) {
            await write().catch((error: unknown) => {
              throw new Error(`${what}, with her key, failed: ${(error as Error).message}`);
            });
          }
          alice = await writeOwner(keyed, "alice", ALICE_SECRET);
          // Every message the write paths leave in her sessions (writesOf's ids), read back with her key.
          const sessions = (await keyed.registry.list({ owner: "alice" })).map((info) => info.id);
          for (const session of sessions)
            await addStored(alice, keyed, session, ["a0", "n1", "i1", "st", "x9"]);
          bob = await writeOwner(keyed, "bob", "zqxbobinclearq");
          await assertKeyedDigests(keyed);
        } finally {
          await keyed.close();
        }
        const found: string[] = [];
        for (const [digest, what] of alice.digests)
          if ((await instance.traces(digest)) > 0) found.push(`${what}: ${digest}`);
        assert.deepEqual(found, [], "unkeyed digests of alice's content in the storage");
        for (const [what, id] of alice.ids)
          assert.ok((await instance.traces(id)) > 0, `the scan finds alice's ${what}, ${id}`);
        // Bob is in clear: his ids are the unkeyed forms, which the scan finds, so it does see digests of the forms
        // it looks for. His content hashes are not asked for: a backend keeps them where it needs them (SQLite keeps
        // none for a clear append, only for an update or upsert), and may keep none.
        const missing: string[] = [];
        for (const [digest, what] of bob.clear)
          if ((await instance.traces(digest)) === 0) missing.push(`${what}: ${digest}`);
        assert.deepEqual(missing, [], "bob's unkeyed ids, not found in the storage");
      } finally {
        await instance.close();
      }
    },
  );
}
