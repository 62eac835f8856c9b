// The Agents SDK's session storage behaviour (after its memorySession tests), held on the SDK's own MemorySession
// and on the adapter over memory, SQLite and Postgres: what the runner may rely on of any Session.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { AgentInputItem, SessionHistoryTransactionAwareSession } from "@openai/agents-core";
import { MemoryStore } from "../../src/index.js";
import { OpenAIAgentsSession } from "../../src/openai-agents/index.js";
import { Session, sessionKinds, textOf, user } from "./sdk-helpers.js";

const reply = (text: string): AgentInputItem => ({
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});

for (const [name, open] of sessionKinds()) {
  describe(`the SDK's session storage contract (${name})`, () => {
    test("items come back in order; a limit keeps the newest, in order; a limit <= 0 gives none", async () => {
      const session = open("order");
      const items = [user("one"), reply("two"), user("three")];
      await session.addItems(items);
      assert.deepEqual(await session.getItems(), items);
      assert.deepEqual(await session.getItems(2), items.slice(1));
      assert.deepEqual(await session.getItems(10), items);
      assert.deepEqual(await session.getItems(0), []);
      assert.deepEqual(await session.getItems(-1), []);
      await session.addItems([]);
      assert.equal((await session.getItems()).length, 3, "an empty batch adds nothing");
    });

    test("reads are copies: changing what was added or read changes nothing stored", async () => {
      const session = open("copies");
      const item = user("original");
      await session.addItems([item]);
      (item as { content: string }).content = "changed after add";
      const [read] = await session.getItems();
      (read as { content: string }).content = "changed after read";
      assert.equal(textOf((await session.getItems())[0]), "original");
    });

    test("popItem removes and returns the newest item; on an empty session it is undefined", async () => {
      const session = open("pop");
      await session.addItems([user("a"), reply("b")]);
      assert.equal(textOf(await session.popItem()), "b");
      assert.deepEqual((await session.getItems()).map(textOf), ["a"]);
      assert.equal(textOf(await session.popItem()), "a");
      assert.equal(await session.popItem(), undefined);
    });

    test("popItem after a regenerated answer: the history is the previous items minus the popped one", async () => {
      const session = open("pop-regenerated") as SessionHistoryTransactionAwareSession;
      const question = user("q");
      await session.addItems([user("a"), question, reply("first answer")]);
      // The SDK's regenerate: the answer replaced in one transaction (a sibling under the question in the tree).
      await session.applyHistoryTransaction({
        operationId: "regenerate",
        transaction: {
          type: "replace_suffix",
          expectedSuffix: [reply("first answer")],
          replacement: [reply("second answer")],
        },
      });
      assert.deepEqual((await session.getItems()).map(textOf), ["a", "q", "second answer"]);
      assert.equal(textOf(await session.popItem()), "second answer");
      assert.deepEqual((await session.getItems()).map(textOf), ["a", "q"], "the replaced answer stays gone");
      assert.deepEqual(await session.getItems(1), [question]);
      await session.addItems([reply("third answer")]);
      assert.deepEqual((await session.getItems()).map(textOf), ["a", "q", "third answer"]);
      assert.equal(textOf(await session.popItem()), "third answer");
      assert.equal(textOf(await session.popItem()), "q");
      assert.deepEqual((await session.getItems()).map(textOf), ["a"]);
    });

    test("clearSession empties the session, which takes new items after", async () => {
      const session = open("clear");
      await session.addItems([user("a"), reply("b")]);
      await session.clearSession();
      assert.deepEqual(await session.getItems(), []);
      await session.addItems([user("again")]);
      assert.deepEqual((await session.getItems()).map(textOf), ["again"]);
    });

    test("bytes in an item are kept as bytes", async () => {
      const session = open("bytes");
      const item = {
        ...user("binary"),
        providerData: { bytes: new Uint8Array([3, 7, 255]) },
      } as AgentInputItem;
      await session.addItems([item]);
      const [stored] = await session.getItems();
      const bytes = (stored as { providerData?: { bytes?: unknown } }).providerData?.bytes;
      assert.ok(bytes instanceof Uint8Array, `got ${String(bytes)}`);
      assert.deepEqual([...bytes], [3, 7, 255]);
    });

    test("the session id is stable", async () => {
      const session = open("stable-id");
      assert.equal(await session.getSessionId(), await session.getSessionId());
      assert.equal(await session.getSessionId(), "stable-id");
    });
  });
}

for (const [name, , create] of sessionKinds()) {
  if (create === null) continue;
  describe(`the adapter's batches (${name})`, () => {
    test("a batch with one refused item stores none of it", async () => {
      const session = new OpenAIAgentsSession(
        Session.create(create()).forSession("atomic").withMaxMessageBytes(2048),
      );
      await session.addItems([user("kept")]);
      await assert.rejects(session.addItems([user("first"), user("x".repeat(4096)), user("third")]), {
        code: "TOO_LARGE",
      });
      assert.deepEqual((await session.getItems()).map(textOf), ["kept"]);
    });

    test("popItem after a regenerate in the tree (a sibling answer) never brings the older answer back", async () => {
      const session = new OpenAIAgentsSession(create(), "regenerated");
      await session.addItems([user("q"), reply("first")]);
      const [question] = await session.session.getHistory();
      const { message } = await session.session.appendMessage(
        { id: "second", role: "assistant", parts: [{ type: "text", text: "second" }] },
        question!.id,
      );
      assert.equal(message?.id, "second");
      const [first] = await session.session.getBranches(question!.id);
      assert.equal(textOf(await session.popItem()), "second");
      assert.deepEqual((await session.getItems()).map(textOf), ["q"]);
      assert.equal(textOf(await session.popItem()), "q");
      assert.deepEqual(await session.getItems(), []);
      // Popped items are deleted; the older answer stays stored, off the path.
      assert.equal(await session.session.getMessage("second"), null);
      assert.deepEqual(
        (await session.session.getHistory(first!.id)).map((m) => m.parts[0]?.text),
        ["first"],
      );
      await session.addItems([user("again")]);
      assert.deepEqual((await session.getItems()).map(textOf), ["again"]);
    });

    test("two writers' batches on one session never interleave", async () => {
      const store = create();
      const a = new OpenAIAgentsSession(store, "two-writers");
      const b = new OpenAIAgentsSession(store, "two-writers");
      const batch = (tag: string) => Array.from({ length: 12 }, (_, i) => user(`${tag}${i}`));
      await Promise.all([a.addItems(batch("a")), b.addItems(batch("b")), a.addItems(batch("c"))]);
      const tags = (await a.getItems()).map((item) => textOf(item)[0]);
      assert.equal(tags.length, 36);
      const runs = tags.filter((tag, i) => tag !== tags[i - 1]);
      assert.equal(runs.length, 3, `each batch is one run: ${tags.join("")}`);
    });
  });
}

test("over a Session on a provider of the app's own (no store steps) batches and transactions are still stored", async () => {
  const store = new MemoryStore();
  const provider = store.session("bare");
  const bare = new Proxy(provider, {
    get: (target, key) => {
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const session = new OpenAIAgentsSession(Session.create(bare));
  await session.addItems([user("a"), user("b")]);
  await session.applyHistoryTransaction({
    operationId: "op",
    transaction: { type: "append_items", items: [user("c")] },
  });
  assert.deepEqual((await session.getItems()).map(textOf), ["a", "b", "c"]);
});
