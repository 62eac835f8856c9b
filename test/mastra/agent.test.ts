// A real Mastra Agent with Memory on our stores and a mock model (AI SDK 7's `ai/test`, the LanguageModelV4 Mastra
// takes): last messages, working memory, a cloned thread, our search over what Mastra stored; then eraseOwner + purge
// leave no byte of the resource on disk, and an encrypted resource leaves none in clear (docs/MASTRA.md).
import assert from "node:assert/strict";
import { Agent } from "@mastra/core/agent";
import { Memory } from "@mastra/memory";
import { simulateReadableStream } from "ai";
// A namespace import: on Node 20 the suite runs on ai@6, whose ai/test has no MockLanguageModelV4, and this file
// must load there to print why it skips.
import * as aiTest from "ai/test";
import { learnFacts } from "../../src/facts/learn.js";
import { SessionManager } from "../../src/manager/manager.js";
import { mastraStorage, searchRecall } from "../../src/mastra/index.js";
import { randomKeyring } from "../helpers/encryption.js";
import { purgeUntilComplete } from "../helpers/purge.js";
import { onEveryBackend } from "./backends.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A model answering each call with the next reply; the prompts it saw are kept, in order. */
function replying(replies: string[]) {
  const prompts: string[] = [];
  const next = (options: { prompt: unknown }) => {
    prompts.push(JSON.stringify(options.prompt));
    return replies[Math.min(prompts.length - 1, replies.length - 1)] ?? "";
  };
  const model = new aiTest.MockLanguageModelV4({
    provider: "mock",
    modelId: "mastra-door",
    doGenerate: async (options) =>
      ({
        content: [{ type: "text", text: next(options) }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      }) as Awaited<ReturnType<aiTest.MockLanguageModelV4["doGenerate"]>>,
    doStream: async (options) => {
      const text = next(options);
      return {
        stream: simulateReadableStream({
          chunkDelayInMs: 0,
          chunks: [
            { type: "stream-start", warnings: [] },
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: text },
            { type: "text-end", id: "t" },
            { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
          ],
        }),
      } as Awaited<ReturnType<aiTest.MockLanguageModelV4["doStream"]>>;
    },
  });
  // Mastra's model type is a union its own check picks from at run time; the mock is a LanguageModelV4.
  return { model: model as never, prompts };
}

const SECRET = "zqxmastrasecretq";

await onEveryBackend("Mastra Agent", (it) => {
  it("remembers the last messages and working memory, clones a thread, is searchable, and is erased", async (opened) => {
    const { store } = opened;
    const { model, prompts } = replying([
      `Noted, your code word is ${SECRET}.`,
      "It is the kayak.",
      "Cloned reply.",
    ]);
    const memory = new Memory({
      storage: mastraStorage(store),
      options: { lastMessages: 10, workingMemory: { enabled: true }, semanticRecall: false },
    });
    const agent = new Agent({ id: "door", name: "door", instructions: "You remember.", model, memory });
    const mem = { thread: "trip", resource: "alice" };
    await agent.generate(`My code word is ${SECRET}, and I love my kayak.`, { memory: mem });
    await memory.updateWorkingMemory({
      threadId: "trip",
      resourceId: "alice",
      workingMemory: "# Alice\n- likes kayaks",
    });
    await agent.generate("What do I love?", { memory: mem });
    const second = prompts[1] ?? "";
    assert.ok(second.includes(`My code word is ${SECRET}`), "the first turn is in the second prompt");
    assert.ok(second.includes("likes kayaks"), "working memory is in the prompt");
    const { messages } = await memory.recall({ threadId: "trip", resourceId: "alice" });
    assert.equal(messages.length, 4);
    // Stored as the session's messages: our search finds them, kept to the owner.
    const hits = await store.searchMessages(SECRET, { owner: "alice" });
    assert.ok(hits.length >= 1, "our search finds what Mastra stored");
    assert.equal((await store.searchMessages(SECRET, { owner: "bob" })).length, 0);
    // A cloned thread carries the history into its next turn.
    const { thread: clone } = await memory.cloneThread({ sourceThreadId: "trip" });
    await agent.generate("And in the clone?", { memory: { thread: clone.id, resource: "alice" } });
    assert.ok((prompts[2] ?? "").includes(`My code word is ${SECRET}`));
    // Erasure: every thread, message, item of alice; then no byte of her on disk (where the scan finds her before).
    if (opened.scan) assert.ok((await opened.scan(SECRET)) > 0, "the scan sees alice's conversation on disk");
    const receipt = await SessionManager.create(store).eraseOwner("alice");
    assert.deepEqual(receipt.sessionIds.sort(), [clone.id, "trip"].sort());
    assert.equal(await memory.getThreadById({ threadId: "trip" }), null);
    assert.equal(
      (await (await mastraStorage(store).getStore("memory"))?.getResourceById({ resourceId: "alice" })) ??
        null,
      null,
    );
    if (opened.scan) {
      await purgeUntilComplete(() => store.purge());
      assert.equal(await opened.scan(SECRET), 0, "no byte of alice's conversation after eraseOwner + purge");
      assert.equal(await opened.scan("likes kayaks"), 0, "nor of her working memory");
    }
  });

  it(
    "leaves no clear byte of an encrypted resource",
    async (opened) => {
      const { store } = opened;
      const memory = new Memory({
        storage: mastraStorage(store),
        options: { lastMessages: 10, workingMemory: { enabled: true }, semanticRecall: false },
      });
      const agent = new Agent({
        id: "sealed",
        name: "sealed",
        instructions: "You remember.",
        model: replying([`Sealed reply ${SECRET}.`]).model,
        memory,
      });
      await agent.generate(`A secret: ${SECRET}`, { memory: { thread: "sealed", resource: "alice" } });
      await memory.updateWorkingMemory({
        threadId: "sealed",
        resourceId: "alice",
        workingMemory: `wm ${SECRET}`,
      });
      await memory.updateThread({ id: "sealed", title: `title ${SECRET}`, metadata: { note: SECRET } });
      const read = await memory.recall({ threadId: "sealed", resourceId: "alice" });
      assert.equal(read.messages.length, 2);
      if (opened.scan) assert.equal(await opened.scan(SECRET), 0, "nothing of alice in clear on disk");
    },
    { keyring: randomKeyring(["alice"]) },
  );
  it("recalls an older thread's message semantically, through our search, within the resource only", async ({
    store,
  }) => {
    const { model, prompts } = replying(["Sure.", "Sure.", "Sure.", "Sure."]);
    const memory = new Memory({
      storage: mastraStorage(store),
      ...searchRecall(store),
      options: { lastMessages: 2, semanticRecall: { topK: 2, messageRange: 1, scope: "resource" } },
    });
    const agent = new Agent({ id: "recall", name: "recall", instructions: "You remember.", model, memory });
    await agent.generate("My sister's name is Marguerite and she lives in Lyon.", {
      memory: { thread: "old", resource: "alice" },
    });
    await agent.generate("Bob's secret: the marguerite password.", {
      memory: { thread: "bobs", resource: "bob" },
    });
    await agent.generate("Where does Marguerite live?", { memory: { thread: "new", resource: "alice" } });
    const last = prompts.at(-1) ?? "";
    assert.ok(
      last.includes("lives in Lyon"),
      "the older thread's message is recalled into the new thread's prompt",
    );
    assert.ok(!last.includes("password"), "another resource's message is never recalled");
  });
  it("lets facts be learned from a Mastra thread, and erases them with the resource", async ({ store }) => {
    const memory = new Memory({ storage: mastraStorage(store), options: { lastMessages: 10 } });
    const agent = new Agent({
      id: "facts",
      name: "facts",
      instructions: "You remember.",
      model: replying(["Noted."]).model,
      memory,
    });
    await agent.generate("I moved to Boston in May 2023.", {
      memory: { thread: "facts", resource: "alice" },
    });
    const [said] = (await memory.recall({ threadId: "facts", resourceId: "alice" })).messages;
    assert.ok(said);
    const extractor = new aiTest.MockLanguageModelV3({
      provider: "mock",
      modelId: "facts",
      doGenerate: async () => ({
        content: [
          {
            type: "text",
            text: JSON.stringify({
              facts: [
                {
                  text: "The user moved to Boston.",
                  about: "user",
                  sources: [said.id],
                  action: "add",
                  target: null,
                },
              ],
            }),
          },
        ],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      }),
    });
    const report = await learnFacts(store, { extractor, sessionIds: ["facts"] });
    assert.equal(report.added, 1);
    const { facts } = await store.facts.list({ owner: "alice" }, { sourceSession: "facts" });
    assert.deepEqual(
      facts.map((f) => f.text),
      ["The user moved to Boston."],
    );
    const receipt = await SessionManager.create(store).eraseOwner("alice");
    assert.equal(receipt.facts, 1);
  });
});
