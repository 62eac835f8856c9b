// Owners in the agent runtime: a store-backed storage scoped to an owner (`forOwner`, or `createSession`'s
// `owner`) registers its sessions with the owner, keeps it on resume and fork, and treats another owner's session
// as unknown on every path (load, list, append, save, delete, resume, fork).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createSession,
  forkSession,
  MemorySessionStorage,
  resumeSession,
  StoreSessionStorage,
} from "../../src/agent/index.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import type { SessionStore } from "../../src/contract/store.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { sampleState } from "../../src/testing/storage/fixtures.js";
import { newPGlite } from "../fixtures/pglite.js";
import { pgliteSwitchedOff } from "../fixtures/postgres-db.js";
import { scriptedModel } from "./helpers/mock-model.js";
import { turn } from "./helpers/session.js";

const notFound = (error: Error & { code?: string }) => error.code === "NOT_FOUND";

for (const [name, open] of [
  ["memory", async () => new MemoryStore()],
  ["SQLite", async () => new SqliteStore(":memory:")],
  ["PGlite", async () => new PostgresStore(await newPGlite())],
] as [string, () => Promise<SessionStore & RegistryCapableStore>][]) {
  const skip = name === "PGlite" ? (pgliteSwitchedOff() ?? false) : false;
  describe(`agent storage owners (${name})`, { skip }, () => {
    it("createSession({ owner }) registers the session with the owner; resume and fork keep it", async () => {
      const store = await open();
      const storage = new StoreSessionStorage(store);
      try {
        const first = await createSession({
          model: scriptedModel([{ text: "Noted." }]),
          sessionStorage: storage,
          owner: "alice",
        });
        await turn(first, "Remember blue.");
        await first.close();
        assert.equal((await store.registry.get(first.id))?.owner, "alice");
        const again = await resumeSession(first.id, {
          model: scriptedModel([{ text: "Blue." }]),
          sessionStorage: storage,
          owner: "alice",
        });
        await turn(again, "Which colour?");
        await again.close();
        assert.equal((await store.registry.get(first.id))?.owner, "alice");
        // A fork through the owner's storage, and one through the unscoped storage: both stay alice's.
        const scoped = await forkSession(first.id, {
          model: scriptedModel([]),
          sessionStorage: storage,
          owner: "alice",
        });
        const plain = await forkSession(first.id, { model: scriptedModel([]), sessionStorage: storage });
        for (const fork of [scoped, plain]) {
          assert.equal((await store.registry.get(fork.id))?.owner, "alice");
          await fork.close();
        }
        assert.deepEqual(
          (await storage.forOwner("alice").list()).sort(),
          [first.id, scoped.id, plain.id].sort(),
        );
      } finally {
        await store.close();
      }
    });

    it("another owner's session is NOT_FOUND to resume or fork, and unknown to load, list, append, save, delete", async () => {
      const store = await open();
      const storage = new StoreSessionStorage(store);
      const alice = storage.forOwner("alice");
      const bob = storage.forOwner("bob");
      try {
        const state = sampleState();
        await alice.create(state);
        const unowned = sampleState();
        await storage.create(unowned);
        for (const id of [state.id, unowned.id]) {
          await assert.rejects(
            createSession({ model: scriptedModel([]), sessionStorage: bob, resume: id }),
            notFound,
          );
          await assert.rejects(
            createSession({ model: scriptedModel([]), sessionStorage: storage, owner: "bob", fork: id }),
            notFound,
          );
          assert.equal(await bob.load(id), undefined);
          await assert.rejects(
            bob.appendMessages(id, [{ id: `m-${id}`, role: "user", content: "hi", createdAt: 1 }], {
              updatedAt: 2,
            }),
            notFound,
          );
          await assert.rejects(bob.save({ ...sampleState(), id }), notFound);
          await bob.delete(id);
        }
        assert.deepEqual(await bob.list(), []);
        assert.deepEqual(await alice.list(), [state.id]);
        // Nothing of bob's attempts reached the stored sessions.
        assert.deepEqual((await alice.load(state.id))?.messages, state.messages);
        assert.deepEqual((await storage.load(unowned.id))?.messages, unowned.messages);
        assert.equal((await store.registry.get(unowned.id))?.owner, undefined);
      } finally {
        await store.close();
      }
    });
  });
}

describe("agent storage owners: input", () => {
  it("a bad owner is INVALID_ARGUMENT; a scoped storage refuses another owner; storages without owners refuse one", async () => {
    const storage = new StoreSessionStorage(new MemoryStore());
    for (const bad of ["", "a\nb", 7, "x".repeat(257)]) {
      assert.throws(() => storage.forOwner(bad as string), { code: "INVALID_ARGUMENT" });
      await assert.rejects(
        createSession({ model: scriptedModel([]), sessionStorage: storage, owner: bad as string }),
        { code: "INVALID_ARGUMENT" },
      );
    }
    const alice = storage.forOwner("alice");
    assert.equal(alice.forOwner("alice"), alice);
    assert.throws(() => alice.forOwner("bob"), { code: "INVALID_ARGUMENT" });
    await assert.rejects(
      createSession({ model: scriptedModel([]), sessionStorage: new MemorySessionStorage(), owner: "alice" }),
      { code: "UNSUPPORTED" },
    );
  });
});
