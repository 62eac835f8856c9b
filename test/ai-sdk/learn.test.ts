// Learning facts through the AI SDK doors (docs/FACTS.md, "Doors"): `sessionMemory({ learn })` and
// `persistChatTurn(…, { learn })` learn each stored turn in the background, never on the call's path, into the
// owner's facts (or the session's own); a failed batch reaches onError; bad options, a bare provider and a store
// without facts are refused before anything is stored.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { convertToModelMessages, generateText, streamText, type UIMessage, wrapLanguageModel } from "ai";
import { persistChatTurn, sessionMemory } from "../../src/ai-sdk/index.js";
import type { FactCapableStore } from "../../src/contract/facts.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import type { BatchFailure, ExtractedFact, ExtractInput } from "../../src/facts/types.js";
import { MemoryStore, Session, SessionManager, SqliteStore } from "../../src/index.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";
import { generatingModel } from "./memory-helpers.js";

type Store = FactCapableStore & RegistryCapableStore;

/** One fact per user message starting "I ", every batch it was given kept. */
function saying(calls: ExtractInput[] = []) {
  return async (input: ExtractInput): Promise<ExtractedFact[]> => {
    calls.push(input);
    return input.messages
      .filter((m) => m.role === "user" && m.text.startsWith("I "))
      .map((m) => ({ text: `The user says: ${m.text}`, about: "user", sources: [m.id] }));
  };
}

/** {@link saying}, held until `release()`: the learning is not done before the call returns. */
function gated() {
  let release!: () => void;
  const open = new Promise<void>((resolve) => {
    release = resolve;
  });
  const calls: ExtractInput[] = [];
  const inner = saying(calls);
  const extractor = async (input: ExtractInput) => {
    await open;
    return inner(input);
  };
  return { extractor, release, calls };
}

const texts = (facts: readonly { text: string }[]) => facts.map((f) => f.text).sort();
const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });

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

for (const [name, create] of [
  ["memory", () => new MemoryStore()],
  ["SQLite", () => new SqliteStore(":memory:")],
] as Array<[string, () => Store]>) {
  describe(`AI SDK doors learn facts (${name})`, () => {
    test("sessionMemory: generateText returns before the learning; learned() waits; the owner's facts", async () => {
      const store = create();
      const gate = gated();
      const middleware = sessionMemory({ store, sessionId: "m1", owner: "alice", learn: gate });
      const model = wrapLanguageModel({
        model: generatingModel((i) => ({ text: `answer ${i}` })),
        middleware,
      });
      const result = await generateText({ model, prompt: "I live in Lyon" });
      assert.equal(result.text, "answer 0", "the call returned while the extractor is held");
      assert.deepEqual((await store.facts.list({ owner: "alice" })).facts, []);
      gate.release();
      await middleware.learned();
      assert.deepEqual(texts((await store.facts.list({ owner: "alice" })).facts), [
        "The user says: I live in Lyon",
      ]);
      await generateText({ model, prompt: "I like tea" });
      await middleware.learned();
      assert.deepEqual(
        gate.calls.map((c) => c.messages.map((m) => m.text)),
        [
          ["I live in Lyon", "answer 0"],
          ["I like tea", "answer 1"],
        ],
        "each exchange learned once, after it was stored",
      );
      assert.deepEqual((await store.facts.list({ owner: "bob" })).facts, []);
      await store.close();
    });

    test("sessionMemory over a Session, streamText: learned once the stream's answer is stored", async () => {
      const store = create();
      const session = Session.create(store).forSession("s1");
      const middleware = sessionMemory({ session, learn: { extractor: saying() } });
      const model = wrapLanguageModel({ model: scriptedModel(() => ({ text: "Noted." })), middleware });
      const result = streamText({ model, prompt: "I have no owner" });
      assert.equal(await result.text, "Noted.");
      await middleware.learned();
      assert.deepEqual(texts((await store.facts.list({ sessionId: "s1" })).facts), [
        "The user says: I have no owner",
      ]);
      await store.close();
    });

    test("a failed batch reaches onError, skipped after maxAttempts; the call itself succeeds", async () => {
      const store = create();
      const failures: BatchFailure[] = [];
      const extractor = async (): Promise<ExtractedFact[]> => {
        throw new Error("the extractor is down");
      };
      const learn = {
        extractor,
        maxAttempts: 1,
        onError: (_error: unknown, batch: BatchFailure) => failures.push(batch),
      };
      const middleware = sessionMemory({ store, sessionId: "f1", learn });
      const model = wrapLanguageModel({ model: generatingModel(() => ({ text: "ok" })), middleware });
      assert.equal((await generateText({ model, prompt: "I live in Lyon" })).text, "ok");
      await middleware.learned();
      assert.equal(failures.length, 1);
      assert.equal(failures[0]?.sessionId, "f1");
      assert.equal(failures[0]?.skipped, true);
      assert.match(failures[0]?.error ?? "", /the extractor is down/);
      await store.close();
    });

    test("an onError that throws or rejects becomes a warning, never an unhandled rejection", async () => {
      const store = create();
      const warnings: Error[] = [];
      const unhandled: unknown[] = [];
      const onWarning = (warning: Error) => warnings.push(warning);
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on("warning", onWarning);
      process.on("unhandledRejection", onUnhandled);
      try {
        const extractor = async (): Promise<ExtractedFact[]> => {
          throw new Error("the extractor is down");
        };
        for (const [sessionId, onError] of [
          [
            "t1",
            () => {
              throw new Error("the handler is broken");
            },
          ],
          ["t2", () => Promise.reject(new Error("the handler rejected"))],
        ] as Array<[string, () => never]>) {
          const middleware = sessionMemory({
            store,
            sessionId,
            learn: { extractor, maxAttempts: 1, onError },
          });
          const model = wrapLanguageModel({ model: generatingModel(() => ({ text: "ok" })), middleware });
          await generateText({ model, prompt: "I live in Lyon" });
          await middleware.learned();
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
        const facts = warnings.filter((w) => w.name === "AgentSessionFactsWarning").map((w) => w.message);
        assert.ok(
          facts.some((m) => /the handler is broken/.test(m)),
          facts.join("\n"),
        );
        assert.ok(
          facts.some((m) => /the handler rejected/.test(m)),
          facts.join("\n"),
        );
        assert.deepEqual(unhandled, []);
      } finally {
        process.off("warning", onWarning);
        process.off("unhandledRejection", onUnhandled);
        await store.close();
      }
    });

    test("persistChatTurn: saveResult stores the answer, then the turn is learned into the owner's facts", async () => {
      const store = create();
      const manager = new SessionManager(store);
      const session = await manager.forOwner("alice").open("c1");
      const gate = gated();
      const turn = await persistChatTurn(session, { message: user("u1", "I live in Oslo") }, { learn: gate });
      const result = await generateText({
        model: generatingModel(() => ({ text: "Oslo it is." })),
        messages: await convertToModelMessages(turn.messages),
      });
      await turn.saveResult(result);
      assert.deepEqual((await store.facts.list({ owner: "alice" })).facts, [], "not learned on the path");
      gate.release();
      await turn.learned();
      assert.deepEqual(texts((await store.facts.list({ owner: "alice" })).facts), [
        "The user says: I live in Oslo",
      ]);
      assert.deepEqual(
        gate.calls.map((c) => c.messages.map((m) => m.role)),
        [["user", "assistant"]],
      );
      await store.close();
    });

    test("persistChatTurn: a turn stored while its session is learned is learned after it", async () => {
      const store = create();
      const gate = gated();
      const learn = { extractor: gate.extractor };
      const chat = () => Session.create(store).forSession("c2");
      const first = await persistChatTurn(chat(), { message: user("u1", "I live in Rome") }, { learn });
      await first.saveResponse({ id: "a1", role: "assistant", parts: [{ type: "text", text: "Rome." }] });
      const second = await persistChatTurn(chat(), { message: user("u2", "I like espresso") }, { learn });
      await second.saveResponse({ id: "a2", role: "assistant", parts: [{ type: "text", text: "Sure." }] });
      gate.release();
      await second.learned();
      await first.learned();
      assert.deepEqual(texts((await store.facts.list({ sessionId: "c2" })).facts), [
        "The user says: I like espresso",
        "The user says: I live in Rome",
      ]);
      await store.close();
    });

    test("refused before anything is stored: bad options, a bare provider, a store without facts", async () => {
      const store = create();
      const learn = { extractor: saying() };
      const message = user("u1", "I live in Lyon");
      await assert.rejects(
        persistChatTurn(
          Session.create(store).forSession("r1"),
          { message },
          { learn: { extractor: 42 } as never },
        ),
        { code: "INVALID_ARGUMENT" },
      );
      await assert.rejects(persistChatTurn(store.session("r1"), { message }, { learn }), {
        code: "UNSUPPORTED",
        message: /a bare SessionProvider/,
      });
      const bare = withoutFacts(store);
      await assert.rejects(persistChatTurn(Session.create(bare).forSession("r1"), { message }, { learn }), {
        code: "UNSUPPORTED",
        message: /a store with facts/,
      });
      assert.equal(await store.session("r1").getLatestLeaf(), null, "nothing stored");
      assert.throws(() => sessionMemory({ store: bare, sessionId: "r2", learn }), { code: "UNSUPPORTED" });
      assert.throws(() => sessionMemory({ store, sessionId: "r2", learn: { extractor: 42 } as never }), {
        code: "INVALID_ARGUMENT",
      });
      await store.close();
    });
  });
}
