// The eve door's ids of what a user wrote (docs/PRIVACY.md, "Ids derived from content"; issue #90) on every
// backend: for an encrypted owner no stored id is the unkeyed SHA-256 of a note or a captured message, and neither
// that digest nor the text is anywhere on disk, so someone holding the file cannot confirm a guess of a short note;
// a retried capture still stores nothing twice and forget still finds the note, also after a key rotation whose old
// key the keyring no longer answers. An owner in clear keeps the ids it had (plain digests). Erasure and purge
// leave neither.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import type { MemoryProvider } from "eve/memory";
import { agentSessionMemory } from "../../src/eve/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { randomKeyring } from "../helpers/encryption.js";
import { purgeUntilComplete } from "../helpers/purge.js";
import { assistant, EVE_SKIP, toolsContext, turnCompleted, user, type Who } from "./contexts.js";
import { backends, type Store, type Target } from "./targets.js";

/** A short note a guess could confirm by its digest. */
const NOTE = "I like cats";
const SAID = "zqxkeyedidssaidq my parrot is called Tom";
const ANSWER = "zqxkeyedidsanswerq noted";
const LATER = "zqxkeyedidslaterq what about dogs";

const who: Who = { principal: "alice", eveSession: "k1" };

// The ids the door gave before they were keyed: a SHA-256 of the parts, 32 hex characters.
const unkeyed = (...parts: string[]) =>
  createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 32);
const NOTE_DIGEST = unkeyed("note", NOTE);
const SAID_DIGEST = unkeyed("message", who.eveSession, JSON.stringify(["user", SAID]), "0");

type Tools = Record<string, { execute(input: unknown, context: unknown): Promise<unknown> }>;
async function run(provider: MemoryProvider, name: string, input: unknown): Promise<string> {
  const tools = (await provider.tools?.(toolsContext(who, "t-tools", 9))) as unknown as Tools;
  return String(await tools[name]?.execute(input, {}));
}

/** Every message id of alice's sessions. */
async function storedIds(store: Store): Promise<string[]> {
  const ids: string[] = [];
  for (const { id } of await new SessionManager(store).forOwner("alice").list())
    for (const message of await store.session(id).getHistory()) ids.push(message.id);
  return ids;
}

const turn = (sequence: number, said: string, answer: string) =>
  turnCompleted(who, `t${sequence}`, sequence, [user(said)], [user(said), assistant(answer)]);

async function scenario(target: Target, keyed: boolean): Promise<void> {
  const keyring = keyed ? randomKeyring(["alice"]) : undefined;
  let store = await target.open(keyring);
  let provider = agentSessionMemory({ manager: new SessionManager(store) });
  const done = turn(1, SAID, ANSWER);
  await provider.capture?.["turn.completed"]?.(done);
  await provider.capture?.["turn.completed"]?.(done);
  assert.match(await run(provider, "remember", { text: NOTE }), /^Remembered as fact /);
  assert.match(await run(provider, "remember", { text: ` ${NOTE} ` }), /^Already remembered/);
  const ids = await storedIds(store);
  assert.equal(ids.length, 3, "two captured messages (a retry stores nothing twice) and the note");

  if (keyed) {
    for (const digest of [NOTE_DIGEST, SAID_DIGEST]) {
      assert.ok(!ids.some((id) => id.includes(digest)), `an id is the unkeyed digest ${digest}`);
      assert.equal(await target.onDisk(digest), 0, `the unkeyed digest ${digest} is on disk`);
    }
    for (const text of [NOTE, SAID, ANSWER]) assert.equal(await target.onDisk(text), 0, `${text} in clear`);
  } else {
    // An owner in clear keeps the ids it had.
    assert.ok(ids.includes(`eve-note-${NOTE_DIGEST}`) && ids.includes(`eve-${SAID_DIGEST}`), String(ids));
  }

  if (keyed && keyring) {
    // A key rotation: rekey under a new key, then the keyring drops the old one (ids derived now differ).
    const old = keyring.keys.get("alice") as Uint8Array;
    const fresh = crypto.getRandomValues(new Uint8Array(32));
    const rotating: Keyring = {
      key: (owner) => (owner === "alice" ? fresh : undefined),
      previousKeys: (owner) => (owner === "alice" ? [old] : []),
    };
    await store.close();
    store = await target.open(rotating);
    await store.rekey("alice");
    await store.close();
    store = await target.open({ key: (owner) => (owner === "alice" ? fresh : undefined) });
    provider = agentSessionMemory({ manager: new SessionManager(store) });
  }

  // The capture retried (after the rotation, for the encrypted owner) stores nothing twice; a new turn is stored.
  await provider.capture?.["turn.completed"]?.(done);
  assert.equal((await storedIds(store)).length, 3, "a retried capture stores nothing twice");
  const next = turnCompleted(
    who,
    "t2",
    2,
    [user(LATER)],
    [user(SAID), assistant(ANSWER), user(LATER), assistant("Dogs too.")],
  );
  await provider.capture?.["turn.completed"]?.(next);
  await provider.capture?.["turn.completed"]?.(next);
  assert.equal((await storedIds(store)).length, 5);
  // The note is found again (by its fact's sealed text when its id was keyed under the dropped key), and forgotten.
  assert.match(await run(provider, "remember", { text: NOTE }), /^Already remembered/);
  const factId = /fact (\S+):/.exec(await run(provider, "search", { query: "cats" }))?.[1];
  assert.ok(factId, "the note's fact is found");
  assert.match(await run(provider, "forget", { id: factId }), /^Forgot fact/);
  const left = await storedIds(store);
  assert.equal(left.length, 4, "the note went with its fact");
  assert.ok(!left.some((id) => id.startsWith("eve-note-")));
  assert.match(await run(provider, "search", { query: "cats" }), /No memory matches/);
  if (keyed) {
    assert.ok(!left.some((id) => id.includes(SAID_DIGEST)));
    assert.equal(await target.onDisk(LATER), 0);
  }

  // Erasure and purge leave neither the ids nor the words (on Citus the next case reuses the schema).
  await new SessionManager(store).eraseOwner("alice");
  assert.equal((await purgeUntilComplete(() => store.purge())).complete, true);
  await store.close();
  for (const marker of [NOTE_DIGEST, SAID_DIGEST, SAID, LATER])
    assert.equal(await target.onDisk(marker), 0, `${marker} on disk after eraseOwner + purge`);
}

for (const backend of await backends()) {
  const reason = EVE_SKIP || ((await backend.skip()) ?? false);
  describe(`eve ids of content: ${backend.name}`, { skip: reason }, () => {
    for (const [label, keyed] of [
      ["an owner without a key", false],
      ["an encrypted owner, across a key rotation", true],
    ] as const) {
      test(`${label}: no guessable id, captured once, the note found and forgotten`, async () => {
        const target = await backend.target();
        try {
          await scenario(target, keyed);
        } finally {
          await target.end();
        }
      });
    }
  });
}
