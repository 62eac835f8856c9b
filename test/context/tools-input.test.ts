// Context blocks and model tools under hostile or concurrent input: parallel appends, unprintable option values,
// oversized tool names, "__proto__" arguments, throwing errors and skill files that open with front matter.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { dropStrictNulls } from "../../src/context/openai-strict.js";
import { executeToolCall } from "../../src/context/tool-formats.js";
import { errorMessage } from "../../src/errors.js";
import { FileSystemSkillProvider, SessionManager } from "../../src/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { OpenAIAgentsSession } from "../../src/openai-agents/index.js";
import { Session } from "../../src/session/session.js";
import { assertSessionError, rejectsWithIssue } from "../helpers/session-error.js";
import { contextBackends, loadContextTurn, memorySkills } from "./backends.js";

const nullProto = () => Object.create(null) as never;
const throwingToString = () => ({ toString: () => assert.fail("toString must not be called") }) as never;

for (const backend of contextBackends) {
  describe(`block appends keep every write (${backend.name})`, () => {
    test("parallel set_context appends keep both lines", async () => {
      const store = backend.create();
      const s = Session.create(store).forSession("s").withContext("notes");
      const { set_context } = await s.tools();
      const results = await Promise.all([
        set_context!.execute({ label: "notes", content: "likes tea", action: "append" }),
        set_context!.execute({ label: "notes", content: "lives in Oslo", action: "append" }),
      ]);
      for (const result of results) assert.match(result, /^Written to notes/);
      assert.equal(await store.blocks.getBlock("notes_s"), "likes tea\nlives in Oslo");
      assert.equal(s.getContextBlock("notes")?.content, "likes tea\nlives in Oslo");
    });

    test("parallel appendContextBlock and replace calls run in call order", async () => {
      const store = backend.create();
      const s = Session.create(store).forSession("s").withContext("notes");
      await Promise.all([
        s.appendContextBlock("notes", "a"),
        s.appendContextBlock("notes", "b"),
        s.replaceContextBlock("notes", "reset"),
        s.appendContextBlock("notes", "c"),
      ]);
      assert.equal(await store.blocks.getBlock("notes_s"), "reset\nc");
    });

    test("appends from two Session instances on one session keep each other's lines", async () => {
      const store = backend.create();
      const a = Session.create(store).forSession("s").withContext("notes");
      const b = Session.create(store).forSession("s").withContext("notes");
      await a.ready();
      await b.ready();
      await a.appendContextBlock("notes", "from a");
      await b.appendContextBlock("notes", "from b");
      const { set_context } = await a.tools();
      await set_context!.execute({ label: "notes", content: "a again", action: "append" });
      assert.equal(await store.blocks.getBlock("notes_s"), "from a\nfrom b\na again");
    });

    test("maxTokens applies to the stored text plus the append", async () => {
      const store = backend.create();
      const a = Session.create(store).forSession("s").withContext("notes", { maxTokens: 10 });
      const b = Session.create(store).forSession("s").withContext("notes", { maxTokens: 10 });
      await a.ready();
      await b.replaceContextBlock("notes", "x".repeat(30));
      // `a` loaded an empty block; the stored 30 characters plus 20 more are over the budget.
      await assert.rejects(a.appendContextBlock("notes", "y".repeat(20)), { code: "TOKEN_LIMIT" });
      assert.equal(await store.blocks.getBlock("notes_s"), "x".repeat(30));
    });
  });

  describe(`tools never lose a block or a skill's state (${backend.name})`, () => {
    test("set_context refuses an action outside its schema instead of replacing the block", async () => {
      const store = backend.create();
      const s = Session.create(store).forSession("s").withContext("notes");
      await s.executeTool("set_context", { label: "notes", content: "allergic to peanuts" });
      for (const action of ["Append", "add", 1]) {
        assert.equal(
          await s.executeTool("set_context", { label: "notes", content: "lives in Oslo", action }),
          'Error: invalid input: "action" must be "replace" or "append"',
        );
      }
      assert.equal(await store.blocks.getBlock("notes_s"), "allergic to peanuts");
      // null is the default, as strict OpenAI schemas send an optional field left out.
      await s.executeTool("set_context", { label: "notes", content: "prefers tea", action: null });
      assert.equal(await store.blocks.getBlock("notes_s"), "prefers tea");
    });

    test("a tool set handed out before close() answers CLOSED and writes nothing", async () => {
      const store = backend.create();
      const s = Session.create(store).forSession("s").withContext("notes");
      const { set_context } = await s.tools();
      await s.close();
      assert.equal(
        await set_context!.execute({ label: "notes", content: "after close" }),
        'Error: Session "s" was closed',
      );
      assert.equal(await store.blocks.getBlock("notes_s"), null);
    });

    test("unload_context whose history write fails leaves the skill loaded, and a retry unloads it", async () => {
      const store = backend.create();
      const inner = store.session("s");
      let failNext = false;
      // The provider fails one updateMessage: the write that marks the load as unloaded.
      const provider = new Proxy(inner, {
        get(target, property) {
          const value = Reflect.get(target, property, target);
          if (property === "updateMessage" && failNext) {
            failNext = false;
            return async () => assert.fail(new Error("transient write failure"));
          }
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const skills = memorySkills({ deploy: { content: "Run make deploy." } });
      const s = Session.create(provider).withContext("skills", { provider: skills });
      const tools = await s.tools();
      const output = await tools.load_context!.execute({ label: "skills", key: "deploy" });
      await s.appendMessage(loadContextTurn("a1", "deploy", output));
      failNext = true;
      assert.match(await tools.unload_context!.execute({ label: "skills", key: "deploy" }), /^Error: /);
      assert.deepEqual([...(await s.getLoadedSkillKeys())], ["skills:deploy"]);
      assert.doesNotMatch(
        await tools.unload_context!.execute({ label: "skills", key: "deploy" }),
        /^Error|not/,
      );
      assert.deepEqual([...(await s.getLoadedSkillKeys())], []);
      const part = (await s.getHistory())[0]?.parts[0] as { output?: unknown } | undefined;
      assert.doesNotMatch(String(part?.output), /make deploy/);
    });
  });
}

describe("validators describe values String() cannot render", () => {
  for (const [name, bad] of [
    ["a null-prototype object", nullProto],
    ["an object whose toString throws", throwingToString],
  ] as const) {
    test(`${name} is INVALID_ARGUMENT, not a TypeError`, async () => {
      // Described without String(): the refusal is the validator's (a type issue), not a TypeError.
      const invalid = (path: string) => ({ code: "INVALID_ARGUMENT", path, rule: "type" }) as const;
      const session = Session.create(new MemoryStore()).forSession("s").withContext("memory");
      await rejectsWithIssue(session.tools({ maxOutputChars: bad() }), invalid("maxOutputChars"));
      assertSessionError(
        () => SessionManager.create(new MemoryStore()).tools({ maxHitChars: bad() }),
        invalid("maxHitChars"),
      );
      assertSessionError(
        () => Session.create(new MemoryStore()).withContext("m", { maxTokens: bad() }),
        invalid("options.maxTokens"),
      );
      // The query limits are parsed by src/search (its issue is at maxQueryChars alone).
      assert.throws(() => new MemoryStore({ queryLimits: { maxQueryChars: bad() } }), {
        code: "INVALID_ARGUMENT",
      });
      const items = new OpenAIAgentsSession(new MemoryStore(), "s");
      await rejectsWithIssue(items.getItems(bad()), invalid("limit"));
    });
  }
});

describe("executeTool results stay within maxOutputChars", () => {
  test("an unknown tool with a huge name is clipped to the session's limit", async () => {
    const session = Session.create(new MemoryStore()).forSession("s").withContext("memory");
    const result = await session.executeTool("n".repeat(1e6), {});
    assert.match(result, /^Error: unknown tool "n{100}…"\. Available tools: set_context$/);
    session.withToolOutputLimits({ maxOutputChars: 500 });
    const call = await session.executeTool({ function: { name: "n".repeat(1e6), arguments: "{}" } });
    assert.ok(call.startsWith("Error: unknown tool"), call);
    assert.ok(call.length <= 500, `${call.length} characters`);
  });

  test("a failure to load the tools is clipped too", async () => {
    const huge = new Error("x".repeat(1e6));
    const result = await executeToolCall(() => Promise.reject(huge), "set_context", {});
    assert.ok(result.startsWith("Error: xxx"), result.slice(0, 40));
    assert.ok(result.length <= 500, `${result.length} characters`);
  });
});

describe('a "__proto__" key in tool arguments', () => {
  test("is an unknown field on both entry points, never the prototype of the input", async () => {
    const store = new MemoryStore();
    const session = Session.create(store).forSession("s").withContext("memory");
    const json = '{"__proto__":{"label":"memory","content":"smuggled"}}';
    const viaJson = await session.executeTool("set_context", json);
    const { set_context } = await session.tools();
    const direct = await set_context!.execute(JSON.parse(json));
    assert.match(direct, /^Error: invalid input/);
    assert.equal(viaJson, direct);
    assert.equal(await store.blocks.getBlock("memory_s"), null);
  });

  test("dropStrictNulls keeps it an own field and looks up only the schema's own properties", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const copy = dropStrictNulls(schema, JSON.parse('{"__proto__":{"a":"x"},"toString":null}')) as object;
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.deepEqual(Object.keys(copy), ["__proto__", "toString"]);
    assert.equal((copy as { a?: unknown }).a, undefined);
  });
});

describe("errorMessage", () => {
  test("never throws, whatever the error's message getter or traps do", async () => {
    const getter = new Error("hidden");
    Object.defineProperty(getter, "message", {
      get() {
        throw new Error("getter");
      },
    });
    assert.equal(errorMessage(getter), "unknown error");
    const trap = new Proxy(new Error("x"), {
      getPrototypeOf() {
        throw new Error("trap");
      },
    });
    assert.equal(typeof errorMessage(trap), "string");
    // The same error thrown by a provider: the tool still resolves to an Error string.
    const store = new MemoryStore();
    const session = Session.create(store)
      .forSession("s")
      .withContext("notes", {
        provider: {
          get: async () => null,
          set: async () => {
            throw getter;
          },
        },
      });
    const { set_context } = await session.tools();
    assert.equal(await set_context!.execute({ label: "notes", content: "hi" }), "Error: unknown error");
  });
});

describe("FileSystemSkillProvider content round-trips exactly", () => {
  const root = mkdtempSync(join(tmpdir(), "agent-session-fm-"));
  process.on("exit", () => rmSync(root, { recursive: true, force: true }));

  test("content that opens with front matter loads back whole and lists no description", async () => {
    const provider = new FileSystemSkillProvider(root);
    const content = "---\ndescription: injected\n---\nthe body";
    await provider.set("a", content);
    assert.equal(await provider.load("a"), content);
    await provider.set("b", "---\r\ndescription: crlf\r\n---\r\nbody", "real");
    assert.equal(await provider.load("b"), "---\r\ndescription: crlf\r\n---\r\nbody");
    assert.equal(await provider.get(), "- a\n- b: real");
  });

  test("through set_context, and other content is written as before", async () => {
    const provider = new FileSystemSkillProvider(root);
    const session = Session.create(new MemoryStore()).forSession("s").withContext("skills", { provider });
    const content = "---\ndescription: injected\n---\nthe body";
    const { set_context } = await session.tools();
    const result = await set_context!.execute({ label: "skills", content });
    const key = /^Indexed "(.+)" in skills\.$/.exec(result)?.[1];
    assert.ok(key, result);
    assert.equal(await provider.load(key), content);
    assert.match(session.getContextBlock("skills")?.content ?? "", new RegExp(`^- ${key}$`, "m"));
    assert.doesNotMatch(session.getContextBlock("skills")?.content ?? "", /: injected/);
    await provider.set("plain", "no header\n---\n");
    assert.equal(readFileSync(join(root, "plain.md"), "utf8"), "no header\n---\n");
    // A file written before (no header of ours) still loads as it did.
    writeFileSync(join(root, "old.md"), "---\ndescription: old\n---\nold body");
    assert.equal(await provider.load("old"), "old body");
  });
});
