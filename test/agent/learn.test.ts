// Learning facts from an agent session's turns (`createSession({ learn })`, docs/FACTS.md "Doors"): after each turn
// the session's new messages are learned in the background into its owner's (or its own) facts, close() stops it,
// and a storage without a store with facts is UNSUPPORTED before anything is opened.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createSession,
  MemorySessionStorage,
  resumeSession,
  StoreSessionStorage,
} from "../../src/agent/index.js";
import { type FactCapableStore, hasFactStore } from "../../src/contract/facts.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import type { ExtractedFact, ExtractInput } from "../../src/facts/types.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { newPGlite } from "../fixtures/pglite.js";
import { pgliteSwitchedOff } from "../fixtures/postgres-db.js";
import { scriptedModel } from "./helpers/mock-model.js";
import { turn } from "./helpers/session.js";

type Store = FactCapableStore & RegistryCapableStore;

/** One fact per user message starting "I ", and the batches it was given. */
function saying(calls: ExtractInput[] = []) {
  return async (input: ExtractInput): Promise<ExtractedFact[]> => {
    calls.push(input);
    return input.messages
      .filter((m) => m.role === "user" && m.text.startsWith("I "))
      .map((m) => ({ text: `The user says: ${m.text}`, about: "user", sources: [m.id] }));
  };
}

const texts = (facts: readonly { text: string }[]) => facts.map((f) => f.text).sort();
const answers = (n: number) => scriptedModel(Array.from({ length: n }, () => ({ text: "Noted." })));

for (const [name, open] of [
  ["memory", async () => new MemoryStore()],
  ["SQLite", async () => new SqliteStore(":memory:")],
  ["PGlite", async () => new PostgresStore(await newPGlite())],
] as [string, () => Promise<Store>][]) {
  const skip = name === "PGlite" ? (pgliteSwitchedOff() ?? false) : false;
  describe(`agent sessions learn facts (${name})`, { skip }, () => {
    // One store for the three cases (each uses its own sessions and owners): PGlite takes seconds to open.
    let store: Store;
    before(async () => {
      if (!skip) store = await open();
    });
    after(() => store?.close());

    it("learns each turn into the owner's facts; a resumed session goes on from the mark", async () => {
      assert.ok(hasFactStore(store));
      const sessionStorage = new StoreSessionStorage(store);
      const calls: ExtractInput[] = [];
      const learn = { extractor: saying(calls) };
      const session = await createSession({ model: answers(2), sessionStorage, owner: "alice", learn });
      await turn(session, "I live in Lyon");
      await session.learned();
      assert.deepEqual(texts((await store.facts.list({ owner: "alice" })).facts), [
        "The user says: I live in Lyon",
      ]);
      await turn(session, "I like tea");
      await session.learned();
      assert.deepEqual(
        calls.map((c) => c.messages.map((m) => m.role)),
        [
          ["user", "assistant"],
          ["user", "assistant"],
        ],
        "each turn's messages once",
      );
      await session.close();

      const again = await resumeSession(session.id, {
        model: answers(1),
        sessionStorage,
        owner: "alice",
        learn,
      });
      await turn(again, "I play chess");
      await again.learned();
      await again.close();
      assert.deepEqual(texts((await store.facts.list({ owner: "alice" })).facts), [
        "The user says: I like tea",
        "The user says: I live in Lyon",
        "The user says: I play chess",
      ]);
      assert.equal(calls.length, 3);
      assert.deepEqual((await store.facts.list({ owner: "bob" })).facts, []);
    });

    it("a resume with learn learns what was stored before it, past the mark, once", async () => {
      const sessionStorage = new StoreSessionStorage(store);
      // Two turns stored by a session opened without learn: nothing learned.
      const plain = await createSession({ model: answers(2), sessionStorage, owner: "carol" });
      await turn(plain, "I live in Nantes");
      await turn(plain, "I like cider");
      await plain.close();
      assert.deepEqual((await store.facts.list({ owner: "carol" })).facts, []);

      const calls: ExtractInput[] = [];
      const learn = { extractor: saying(calls) };
      const resumed = await resumeSession(plain.id, {
        model: answers(0),
        sessionStorage,
        owner: "carol",
        learn,
      });
      await resumed.learned(); // no turn: the resume itself learns
      assert.deepEqual(texts((await store.facts.list({ owner: "carol" })).facts), [
        "The user says: I like cider",
        "The user says: I live in Nantes",
      ]);
      assert.deepEqual(
        calls.map((c) => c.messages.map((m) => m.text)),
        [["I live in Nantes", "Noted.", "I like cider", "Noted."]],
      );
      await resumed.close();

      // Resumed again: everything is past the mark, so the extractor is not called; a new turn is learned alone.
      const again = await resumeSession(plain.id, {
        model: answers(1),
        sessionStorage,
        owner: "carol",
        learn,
      });
      await again.learned();
      assert.equal(calls.length, 1, "nothing learned twice");
      await turn(again, "I play the violin");
      await again.learned();
      await again.close();
      assert.deepEqual(
        calls.map((c) => c.messages.map((m) => m.text)),
        [
          ["I live in Nantes", "Noted.", "I like cider", "Noted."],
          ["I play the violin", "Noted."],
        ],
      );
      assert.equal((await store.facts.list({ owner: "carol" })).facts.length, 3);
    });

    it("a resume picks up the batch a close cut short", async () => {
      const sessionStorage = new StoreSessionStorage(store);
      let started!: () => void;
      const calling = new Promise<void>((resolve) => {
        started = resolve;
      });
      const hanging = (input: ExtractInput): Promise<ExtractedFact[]> =>
        new Promise((_resolve, reject) => {
          started();
          input.signal.addEventListener("abort", () => reject(input.signal.reason));
        });
      const first = await createSession({
        model: answers(1),
        sessionStorage,
        learn: { extractor: hanging, onError: () => {} },
      });
      await turn(first, "I moved to Brest");
      await calling;
      await first.close();
      assert.deepEqual((await store.facts.list({ sessionId: first.id })).facts, []);
      const resumed = await resumeSession(first.id, {
        model: answers(0),
        sessionStorage,
        learn: { extractor: saying() },
      });
      await resumed.learned();
      await resumed.close();
      assert.deepEqual(texts((await store.facts.list({ sessionId: first.id })).facts), [
        "The user says: I moved to Brest",
      ]);
    });

    it("a session without an owner learns into its own facts", async () => {
      const session = await createSession({
        model: answers(1),
        sessionStorage: new StoreSessionStorage(store),
        learn: { extractor: saying() },
      });
      await turn(session, "I have no owner");
      await session.learned();
      await session.close();
      assert.deepEqual(texts((await store.facts.list({ sessionId: session.id })).facts), [
        "The user says: I have no owner",
      ]);
    });

    it("close() aborts a learn in flight: its batch stays unlearned and the session is let go", async () => {
      let started!: () => void;
      const calling = new Promise<void>((resolve) => {
        started = resolve;
      });
      const hanging = (input: ExtractInput): Promise<ExtractedFact[]> =>
        new Promise((_resolve, reject) => {
          started();
          input.signal.addEventListener("abort", () => reject(input.signal.reason));
        });
      const session = await createSession({
        model: answers(1),
        sessionStorage: new StoreSessionStorage(store),
        learn: { extractor: hanging, onError: () => {} },
      });
      await turn(session, "I live in Lyon");
      await calling;
      await session.close();
      assert.equal((await store.facts.mark(session.id))?.through ?? 0, 0, "the mark did not move");
      assert.equal((await store.facts.mark(session.id))?.holder ?? null, null, "the lease was let go");
      assert.deepEqual((await store.facts.list({ sessionId: session.id })).facts, []);
    });
  });
}

describe("agent sessions learn facts: refusals", () => {
  it("a storage without a store with facts is UNSUPPORTED, and bad options INVALID_ARGUMENT, opening nothing", async () => {
    const storage = new MemorySessionStorage();
    await assert.rejects(
      createSession({ model: answers(0), sessionStorage: storage, learn: { extractor: saying() } }),
      { code: "UNSUPPORTED" },
    );
    const store = new MemoryStore();
    const sessionStorage = new StoreSessionStorage(store);
    await assert.rejects(createSession({ model: answers(0), sessionStorage, learn: { extractor: "" } }), {
      code: "INVALID_ARGUMENT",
    });
    const noFacts = new StoreSessionStorage(withoutFacts(store));
    await assert.rejects(
      createSession({ model: answers(0), sessionStorage: noFacts, learn: { extractor: saying() } }),
      { code: "UNSUPPORTED" },
    );
    assert.deepEqual(await storage.list(), []);
    assert.deepEqual(await sessionStorage.list(), []);
  });
});

/** The store seen without its fact store (every other member bound to it). */
function withoutFacts<T extends object>(store: T): T {
  return new Proxy(store, {
    get: (target, key) => {
      if (key === "facts") return undefined;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
