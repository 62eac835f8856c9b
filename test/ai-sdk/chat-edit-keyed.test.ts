// The id of an edited user message (docs/PRIVACY.md, "Ids derived from content"; issue #90): for an owner with a
// key it is keyed (an HMAC under the owner's blind-index key), so neither it nor anything on disk is the plain
// SHA-256 of the text someone could confirm a guess with; the same edit sent again finds its row, also during a
// key rotation and when it was stored under the plain id before; an owner in clear keeps exactly the plain ids.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type * as AI from "ai";
import { editedId } from "../../src/ai-sdk/edited-ids.js";
import { persistChatTurn } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, SessionManager, SqliteStore } from "../../src/index.js";
import { loadNodeSqlite } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { occurrences, randomKeyring } from "../helpers/encryption.js";
import { sqliteFiles } from "../helpers/purge.js";

const ORIGINAL = "zqxeditoriginalq what is my balance";
const EDITED = "zqxediteditedq my password is hunter2";

const text = (id: string, role: "user" | "assistant", body: string): AI.UIMessage => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});
const edit = text("u1", "user", EDITED);
/** The plain digest of the edit: what its id was before ids were keyed. */
const PLAIN = editedId(edit);
const PLAIN_DIGEST = PLAIN.slice("u1~".length);

const DRIVERS = ["better-sqlite3", "node:sqlite"] as const;

/** A SQLite file in a fresh directory, removed after `run`. */
async function onFile(run: (path: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "chat-edit-keyed-"));
  try {
    await run(join(dir, "chat.db"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A session of `owner` holding the original message u1. */
async function chatOf(store: SqliteStore, owner: string): Promise<Session> {
  const { id } = await SessionManager.create(store).create("chat", { owner });
  const session = Session.create(store).forSession(id);
  await session.appendMessage(text("u1", "user", ORIGINAL));
  return session;
}

/** The ids of u1's siblings (u1 and its edits), in order. */
const siblingIds = async (session: Session) =>
  ((await session.getSiblings("u1"))?.siblings ?? []).map((m) => m.id);

for (const driver of DRIVERS) {
  const skip =
    driver === "node:sqlite" && !loadNodeSqlite()
      ? `node:sqlite needs Node >= 22.13 (${process.version})`
      : false;
  describe(`edited ids on SQLite (${driver})`, { skip }, () => {
    test("an encrypted owner's edit has a keyed id, found again, and nothing on disk confirms the text", () =>
      onFile(async (path) => {
        const store = new SqliteStore(path, { driver, keyring: randomKeyring(["alice"]) });
        const session = await chatOf(store, "alice");
        const first = await persistChatTurn(session, { messages: [edit] });
        const id = first.parentId!;
        assert.match(id, /^u1~[A-Za-z0-9_-]{22}$/);
        assert.notEqual(id, PLAIN, "the id is not the unkeyed digest of the text");
        assert.deepEqual((await session.getMessage(id))?.parts, edit.parts);

        const again = await persistChatTurn(session, { messages: [edit] });
        assert.equal(again.parentId, id, "the same edit sent again finds its row");
        assert.deepEqual(await siblingIds(session), ["u1", id], "no second sibling");
        await store.close();
        assert.ok(occurrences(sqliteFiles(path), id) > 0, "ids are in clear on disk, so the scan finds them");
        for (const marker of [EDITED, ORIGINAL, PLAIN_DIGEST, PLAIN]) {
          assert.equal(occurrences(sqliteFiles(path), marker), 0, `${marker} is on disk`);
        }
      }));

    test("an owner in clear keeps the plain id", () =>
      onFile(async (path) => {
        const store = new SqliteStore(path, { driver, keyring: randomKeyring(["alice"]) });
        const session = await chatOf(store, "bob");
        assert.deepEqual(await session.contentDigests(), []);
        assert.equal((await persistChatTurn(session, { messages: [edit] })).parentId, PLAIN);
        assert.equal((await persistChatTurn(session, { messages: [edit] })).parentId, PLAIN);
        assert.deepEqual(await siblingIds(session), ["u1", PLAIN]);
        await store.close();
      }));

    test("during a key rotation, and stored under the plain id before, the same edit finds its row", () =>
      onFile(async (path) => {
        const keyring = randomKeyring(["alice"]);
        let store = new SqliteStore(path, { driver, keyring });
        let session = await chatOf(store, "alice");
        const sessionId = session.sessionId;
        // An edit stored before ids were keyed: sealed, under the plain id.
        await session.appendMessage({ ...edit, id: PLAIN }, null);
        assert.equal((await persistChatTurn(session, { messages: [edit] })).parentId, PLAIN);
        const other = text("u1", "user", `${EDITED} and more`);
        const keyedId = (await persistChatTurn(session, { messages: [other] })).parentId!;
        assert.notEqual(keyedId, editedId(other));
        await store.close();

        // Rotate: the new key is current, the old one still answered as previous.
        const old = keyring.keys.get("alice")!;
        const fresh = crypto.getRandomValues(new Uint8Array(32));
        const rotating: Keyring = {
          key: (owner) => (owner === "alice" ? fresh : undefined),
          previousKeys: (owner) => (owner === "alice" ? [old] : []),
        };
        store = new SqliteStore(path, { driver, keyring: rotating });
        await store.rekey("alice");
        session = Session.create(store).forSession(sessionId);
        assert.equal((await session.contentDigests()).length, 2, "the new key's digest, then the old one's");
        assert.equal((await persistChatTurn(session, { messages: [edit] })).parentId, PLAIN);
        assert.equal((await persistChatTurn(session, { messages: [other] })).parentId, keyedId);
        assert.deepEqual(await siblingIds(session), ["u1", PLAIN, keyedId], "nothing stored twice");
        await store.close();
      }));
  });
}

describe("edited ids of other storages", () => {
  test("a store's provider keys them too; a store without keys, or a storage without contentDigests, does not", async () => {
    const session = Session.create(new MemoryStore()).forSession("m");
    await session.appendMessage(text("u1", "user", ORIGINAL));
    assert.equal((await persistChatTurn(session, { messages: [edit] })).parentId, PLAIN);

    const store = new SqliteStore(":memory:", { keyring: randomKeyring(["alice"]) });
    const { id } = await SessionManager.create(store).create("chat", { owner: "alice" });
    const provider = store.session(id);
    await provider.appendMessage(text("u1", "user", ORIGINAL));
    const keyed = (await persistChatTurn(provider, { messages: [edit] })).parentId;
    assert.notEqual(keyed, PLAIN, "the store's provider has contentDigests");
    // A third-party storage: the ChatStorage methods only (documented: its edits keep the plain digest).
    const bare = {
      getMessage: (mid: string) => provider.getMessage(mid),
      appendMessage: provider.appendMessage.bind(provider),
      updateMessage: provider.updateMessage.bind(provider),
      getHistory: provider.getHistory.bind(provider),
      getBranches: provider.getBranches.bind(provider),
    };
    const other = text("u1", "user", `${EDITED} again`);
    assert.equal((await persistChatTurn(bare, { messages: [other] })).parentId, editedId(other));
    await store.close();
  });
});
