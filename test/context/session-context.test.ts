import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AgentSearchProvider, Session } from "../../src/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { contextBackends, loadContextTurn, memorySkills } from "./backends.js";

for (const backend of contextBackends) {
  describe(`context blocks and system prompt (${backend.name})`, () => {
    test("auto-wired writable blocks and cached prompt, namespaced by session id in any builder order", async () => {
      const store = backend.create();
      const a = Session.create(store)
        .withCachedPrompt()
        .withContext("memory", { maxTokens: 100 })
        .forSession("chat-123");
      await a.replaceContextBlock("memory", "likes tea");
      assert.equal(await store.blocks.getBlock("memory_chat-123"), "likes tea");
      const prompt = await a.freezeSystemPrompt();
      assert.equal(await store.blocks.getBlock("_system_prompt_chat-123"), prompt);
      const plain = Session.create(store).withContext("memory");
      await plain.replaceContextBlock("memory", "default session");
      assert.equal(await store.blocks.getBlock("memory"), "default session");
      assert.equal(await store.blocks.getBlock("_system_prompt"), null);
    });

    test("a stored block's label must not start with _: the library's own rows live under _ keys", async () => {
      const store = backend.create();
      const owner = Session.create(store).withCachedPrompt().forSession("x");
      const prompt = await owner.freezeSystemPrompt();
      // Auto-wired, "_system_prompt" in session "x" would be the row of x's cached prompt.
      const intruder = Session.create(store).withContext("_system_prompt").forSession("x");
      await rejectsWithIssue(intruder.freezeSystemPrompt(), {
        code: "INVALID_ARGUMENT",
        path: "label",
        rule: "format",
      });
      const later = Session.create(store).forSession("y");
      await assert.rejects(later.addContext("_notes"), { code: "INVALID_ARGUMENT" });
      assert.equal(await store.blocks.getBlock("_system_prompt_x"), prompt);
      // A block with its own provider stores nothing in the table, so any label is fine there.
      const own = Session.create(store).withContext("_notes", { provider: { get: async () => "mine" } });
      assert.match(await own.freezeSystemPrompt(), /mine/);
    });

    test("blocks are loaded by any awaited call; init(label) runs once before get for every kind", async () => {
      const calls: string[] = [];
      const tracked = (name: string, extra: Record<string, unknown>) => ({
        init: (label: string) => {
          calls.push(`${name}:init:${label}`);
        },
        get: async () => {
          calls.push(`${name}:get`);
          return `${name} content`;
        },
        ...extra,
      });
      const session = Session.create(backend.create())
        .withContext("soul", { provider: tracked("ro", {}) })
        .withContext("notes", { provider: tracked("w", { set: async () => {} }) })
        .withContext("skills", { provider: tracked("sk", { load: async () => null }) })
        .withContext("kb", { provider: tracked("se", { search: async () => null }) })
        .withContext("plain", { provider: { get: async () => null } });
      assert.deepEqual(session.getContextBlocks(), []);
      await session.getHistory();
      assert.equal(session.getContextBlock("soul")?.content, "ro content");
      assert.equal(session.getContextBlock("plain")?.content, "");
      assert.deepEqual(calls.slice(0, 2), ["ro:init:soul", "ro:get"]);
      assert.ok(
        calls.includes("w:init:notes") && calls.includes("sk:init:skills") && calls.includes("se:init:kb"),
      );
      await session.refreshSystemPrompt();
      assert.equal(calls.filter((c) => c.includes(":init:")).length, 4);
    });

    test("freeze renders once and persists; writes do not change it; refresh does; a new Session gets the stored prompt", async () => {
      const store = backend.create();
      const make = () =>
        Session.create(store)
          .forSession("s")
          .withContext("soul", { description: "Identity", provider: { get: async () => "Be kind." } })
          .withContext("memory", { description: "Facts", maxTokens: 1100 })
          .withCachedPrompt();
      const session = make();
      const [first, second] = await Promise.all([session.freezeSystemPrompt(), session.freezeSystemPrompt()]);
      assert.equal(first, second);
      assert.ok(
        first.includes("SOUL (Identity) [readonly]") &&
          first.includes("MEMORY (Facts) [0% — 0/1100 tokens] [writable]"),
      );
      await session.appendContextBlock("memory", "User likes coffee.");
      assert.equal(await session.freezeSystemPrompt(), first);
      assert.equal(await make().freezeSystemPrompt(), first);
      const refreshed = await session.refreshSystemPrompt();
      assert.ok(refreshed.includes("User likes coffee."));
      assert.equal(await make().freezeSystemPrompt(), refreshed);
      await store.blocks.setBlock("_system_prompt_s", "");
      assert.equal(await make().freezeSystemPrompt(), "");
    });

    test("write rules: readonly, not found, keyed, maxTokens (equal allowed), append joins with a newline", async () => {
      const session = Session.create(backend.create())
        .withContext("soul", { provider: { get: async () => "fixed" } })
        .withContext("memory", { maxTokens: 3 })
        .withContext("notes")
        .withContext("skills", { provider: memorySkills() });
      await assert.rejects(session.replaceContextBlock("soul", "x"), { code: "READONLY" });
      await assert.rejects(session.replaceContextBlock("ghost", "x"), { code: "READONLY" });
      await assert.rejects(session.appendContextBlock("ghost", "x"), { code: "NOT_FOUND" });
      await rejectsWithIssue(session.replaceContextBlock("skills", "x"), {
        code: "INVALID_ARGUMENT",
        path: "label",
      });
      await rejectsWithIssue(session.replaceContextBlock("memory", "one two three four five six"), {
        code: "TOKEN_LIMIT",
        path: "content",
        rule: "too_long",
      });
      assert.equal((await session.replaceContextBlock("memory", "abcdefghijkl")).tokens, 3);
      await assert.rejects(session.appendContextBlock("memory", "more words"), { code: "TOKEN_LIMIT" });
      await session.appendContextBlock("notes", "a");
      assert.equal((await session.appendContextBlock("notes", "b")).content, "a\nb");
      assert.equal((await session.appendContextBlock("notes", "\nc")).content, "a\nb\nc");
      await rejectsWithIssue(session.replaceContextBlock("memory", 42 as never), {
        code: "INVALID_ARGUMENT",
        path: "content",
        rule: "type",
      });
    });

    test("addContext and removeContext at runtime leave the frozen prompt alone", async () => {
      const session = Session.create(backend.create()).withContext("soul", {
        provider: { get: async () => "hi" },
      });
      const before = await session.freezeSystemPrompt();
      const added = await session.addContext("extension-notes", {
        description: "From extension X",
        maxTokens: 500,
      });
      assert.equal(added.writable, true);
      await rejectsWithIssue(session.addContext("soul"), {
        code: "INVALID_ARGUMENT",
        path: "label",
        rule: "conflict",
      });
      assert.equal(await session.freezeSystemPrompt(), before);
      assert.ok((await session.refreshSystemPrompt()).includes("EXTENSION-NOTES (From extension X)"));
      assert.equal(session.removeContext("extension-notes"), true);
      assert.equal(session.removeContext("extension-notes"), false);
      assert.ok(!(await session.refreshSystemPrompt()).includes("EXTENSION-NOTES"));
    });

    test("set_context: only writable blocks, replace/append, usage strings, errors as strings", async () => {
      const session = Session.create(backend.create())
        .withContext("soul", { provider: { get: async () => "fixed" } })
        .withContext("memory", { description: "Facts", maxTokens: 100 })
        .withContext("todo");
      const tools = await session.tools();
      assert.deepEqual(Object.keys(tools), ["set_context"]);
      const setContext = tools.set_context!;
      assert.match(setContext.description, /- "memory" \(writable\): Facts/);
      assert.match(setContext.description, /- "todo" \(writable\): no description/);
      assert.doesNotMatch(setContext.description, /soul/);
      assert.equal(
        await setContext.execute({ label: "memory", content: "likes tea" }),
        "Written to memory. Usage: 3% (3/100 tokens)",
      );
      assert.equal(
        await setContext.execute({ label: "memory", content: "and cake", action: "append" }),
        "Written to memory. Usage: 6% (6/100 tokens)",
      );
      assert.equal(session.getContextBlock("memory")?.content, "likes tea\nand cake");
      assert.equal(
        await setContext.execute({ label: "todo", content: "ship it" }),
        "Written to todo. Usage: 3 tokens",
      );
      assert.equal(
        await setContext.execute({ label: "soul", content: "x" }),
        'Error: Block "soul" is readonly',
      );
      assert.equal(
        await setContext.execute({ label: "nope", content: "x" }),
        'Error: block "nope" not found',
      );
      assert.equal(
        await setContext.execute({ label: "memory", content: "word ".repeat(200) }),
        'Error: Block "memory" exceeds maxTokens: 260 > 100',
      );
      assert.equal(
        await setContext.execute({ label: "memory" }),
        'Error: invalid input: "content" must be a string',
      );
      const none = Session.create(backend.create()).withContext("soul", {
        provider: { get: async () => "x" },
      });
      assert.deepEqual(Object.keys(await none.tools()), []);
    });

    test("skills: keyed writes, load/unload with tracking, history marker, restore after restart", async () => {
      const store = backend.create();
      const skills = memorySkills({ "api-ref": { content: "API docs", description: "API Reference" } });
      const make = () =>
        Session.create(store)
          .forSession("k")
          .withContext("skills", { description: "Playbooks", provider: skills });
      const session = make();
      const tools = await session.tools();
      assert.deepEqual(Object.keys(tools).sort(), ["load_context", "set_context", "unload_context"]);
      assert.match(tools.set_context!.description, /"skills" \(skill collection, keyed entries\)/);
      assert.match(tools.set_context!.description, /metadata/);
      assert.equal(
        await tools.set_context!.execute({
          label: "skills",
          content: "Talk like a pirate",
          metadata: { title: "Pirate style", description: "Arr" },
        }),
        'Indexed "pirate-style" in skills.',
      );
      assert.equal(skills.docs.get("pirate-style")?.description, "Arr");
      assert.match(session.getContextBlock("skills")!.content, /- pirate-style: Arr/);
      assert.equal(await tools.load_context!.execute({ label: "skills", key: "api-ref" }), "API docs");
      assert.equal(
        await tools.load_context!.execute({ label: "skills", key: "missing" }),
        "Not found: missing",
      );
      assert.equal(
        await tools.load_context!.execute({ label: "memory", key: "x" }),
        'Error: "memory" is not a skill block. Skill blocks: skills',
      );
      assert.deepEqual([...(await session.getLoadedSkillKeys())], ["skills:api-ref"]);
      assert.match((await session.tools()).unload_context!.description, /skills:api-ref/);
      // The model's turn that loaded the skill, as the AI SDK stores it (static tool part).
      await session.appendMessage({ id: "u1", role: "user", parts: [{ type: "text", text: "use the api" }] });
      await session.appendMessage(loadContextTurn("a1", "api-ref", "API docs"));
      // A fresh Session answers from the history on its first call, with nothing else called before.
      assert.deepEqual([...(await make().getLoadedSkillKeys())], ["skills:api-ref"]);
      const restarted = make();
      assert.deepEqual([...(await restarted.getLoadedSkillKeys())], ["skills:api-ref"]);
      assert.equal(
        await (await restarted.tools()).unload_context!.execute({ label: "skills", key: "api-ref" }),
        'Unloaded "api-ref" from skills. Context reclaimed.',
      );
      const rewritten = await restarted.getMessage("a1");
      assert.equal(rewritten?.parts[0]?.output, "[skill unloaded: api-ref]");
      assert.equal(
        await (await restarted.tools()).unload_context!.execute({ label: "skills", key: "api-ref" }),
        'Skill "api-ref" is not currently loaded in "skills".',
      );
      const again = make();
      await again.ready();
      assert.deepEqual([...(await again.getLoadedSkillKeys())], []);
      // A dynamic-tool part (toolName) is recognised too.
      await again.appendMessage({
        id: "a2",
        role: "assistant",
        parts: [
          {
            type: "dynamic-tool",
            toolName: "load_context",
            toolCallId: "c2",
            state: "output-available",
            input: { label: "skills", key: "pirate-style" },
            output: "...",
          },
        ],
      });
      const third = make();
      await third.ready();
      assert.deepEqual([...(await third.getLoadedSkillKeys())], ["skills:pirate-style"]);
      await third.clearMessages();
      assert.deepEqual([...(await third.getLoadedSkillKeys())], []);
    });

    test("skill restore reads rows one at a time through row stats, never the whole history; failed calls do not count", async () => {
      const store = backend.create();
      const loadPart = (key: string) => ({
        type: "tool-load_context",
        toolCallId: `c-${key}`,
        state: "output-available",
        input: { label: "skills", key },
        output: "doc",
      });
      const writer = store.session("bounded");
      await writer.appendMessage({ id: "u", role: "user", parts: [{ type: "text", text: "hi" }] });
      await writer.appendMessage({ id: "a1", role: "assistant", parts: [loadPart("one")] });
      await writer.appendMessage({ id: "a2", role: "assistant", parts: [loadPart("two")] });
      await writer.appendMessage({
        id: "a3",
        role: "assistant",
        parts: [
          {
            ...loadPart("one"),
            type: "tool-unload_context",
            output: 'Unloaded "one" from skills. Context reclaimed.',
          },
          // Only what the tracker did counts: a load that found nothing, an unload that failed.
          { ...loadPart("three"), output: "Not found: three" },
          { ...loadPart("two"), type: "tool-unload_context", output: "Error: storage unavailable" },
        ],
      });
      const provider = store.session("bounded");
      const guarded = new Proxy(provider, {
        get(target, name, receiver) {
          if (name === "getHistory") return () => Promise.reject(new Error("restore read the whole history"));
          const value = Reflect.get(target, name, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const session = Session.create(guarded).withContext("skills", { provider: memorySkills() });
      assert.deepEqual([...(await session.getLoadedSkillKeys())], ["skills:two"]);
    });

    test("search blocks: search_context, keyed indexing, [searchable] even when empty", async () => {
      const store = backend.create();
      const session = Session.create(store).withContext("knowledge", {
        description: "KB",
        provider: new AgentSearchProvider(store),
      });
      assert.match(await session.freezeSystemPrompt(), /KNOWLEDGE \(KB\) \[searchable\]/);
      const tools = await session.tools();
      assert.deepEqual(Object.keys(tools).sort(), ["search_context", "set_context"]);
      assert.equal(
        await tools.search_context!.execute({ label: "knowledge", query: "deploy" }),
        "No results found.",
      );
      assert.equal(
        await tools.set_context!.execute({
          label: "knowledge",
          content: "Deploys happen on Thursdays",
          metadata: { title: "Deploy day" },
        }),
        'Indexed "deploy-day" in knowledge.',
      );
      assert.equal(session.getContextBlock("knowledge")?.content, "1 entries indexed.");
      assert.equal(
        await tools.search_context!.execute({ label: "knowledge", query: "deployment thursday" }),
        "[deploy-day]\nDeploys happen on Thursdays",
      );
      assert.equal(
        await tools.search_context!.execute({ label: "other", query: "x" }),
        'Error: "other" is not searchable. Searchable blocks: knowledge',
      );
    });
  });
}

describe("context on a plain SessionProvider", () => {
  test("blocks without a provider are empty read-only blocks; no prompt persistence", async () => {
    const provider = new MemoryStore().session("p");
    const session = new Session(provider, {
      context: [{ label: "memory", maxTokens: 10 }],
    }).withCachedPrompt();
    assert.deepEqual(Object.keys(await session.tools()), []);
    assert.equal(await session.freezeSystemPrompt(), "");
    await assert.rejects(session.addContext("notes"), { code: "UNSUPPORTED" });
  });
});
