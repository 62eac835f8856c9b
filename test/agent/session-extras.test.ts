import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Tool, tool } from "ai";
import { z } from "zod";
import { createSession, MemorySessionStorage, parseModelId, resolveModel } from "../../src/agent/index.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { promptOf, scriptedModel } from "./helpers/mock-model.js";
import { stopOf, turn } from "./helpers/session.js";

describe("agent session: memory from a Session", () => {
  it("joins the frozen prompt and memory tools to every call; the caller's tools win on a name clash", async () => {
    const remembered: string[] = [];
    const memory = {
      freezeSystemPrompt: async () => "MEMORY:\n- user likes tea",
      tools: async (): Promise<Record<string, Tool>> => ({
        remember: tool({
          inputSchema: z.object({ fact: z.string() }),
          execute: async ({ fact }) => {
            remembered.push(fact);
            return "saved";
          },
        }),
        clash: tool({ inputSchema: z.object({}), execute: async () => "memory version" }),
      }),
    };
    const clash = tool({ inputSchema: z.object({}), execute: async () => "caller version" });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: "m1", name: "remember", input: { fact: "likes green tea" } },
          { id: "m2", name: "clash", input: {} },
        ],
      },
      { text: "Saved." },
    ]);
    const session = await createSession({
      model,
      memory,
      tools: { clash },
      systemPrompt: "You are helpful.",
    });
    assert.equal(stopOf(await turn(session, "I like green tea")).reason, "completed");
    assert.deepEqual(remembered, ["likes green tea"]);
    const system = model.doStreamCalls[0]?.prompt[0];
    assert.equal(system?.role, "system");
    assert.equal(system?.content, "You are helpful.\n\nMEMORY:\n- user likes tea");
    assert.deepEqual(model.doStreamCalls[0]?.tools?.map((t) => t.name).sort(), ["clash", "remember"]);
    assert.match(promptOf(model, 1).at(-1)?.text ?? "", /caller version/);
  });

  it("a failing memory becomes an error event, not a thrown error", async () => {
    const memory = {
      freezeSystemPrompt: async () => {
        throw new Error("blocks unavailable");
      },
      tools: async () => ({}),
    };
    const session = await createSession({ model: scriptedModel([]), memory });
    const events = await turn(session, "hi");
    const error = events.find((e) => e.type === "error");
    assert.match(error?.type === "error" ? error.message : "", /blocks unavailable/);
    assert.equal(stopOf(events).reason, "error");
  });
});

describe("agent session: compaction", () => {
  function withSummary(model: ReturnType<typeof scriptedModel>, text: string) {
    model.doGenerate = async () => ({
      content: [{ type: "text", text }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 300, noCache: 300, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 30, text: 30, reasoning: 0 },
      },
      warnings: [],
    });
    return model;
  }

  it("summarises older messages, counts the call in the ledger, and sends summary plus tail afterwards", async () => {
    const storage = new MemorySessionStorage();
    const model = withSummary(
      scriptedModel((i) => ({ text: `answer ${i}` })),
      "The user asked three questions about numbers.",
    );
    const session = await createSession({ model, sessionStorage: storage, systemPrompt: "Base." });
    for (const q of ["q0", "q1", "q2"]) await turn(session, q);
    const marker = await session.compact({ keepLastMessages: 2 });
    assert.equal(marker?.metadata?.synthetic, "compaction");
    const usage = session.getUsage();
    assert.equal(usage.compactions, 1);
    assert.equal(usage.steps, 3);
    assert.equal(usage.entries.at(-1)?.kind, "compaction");
    assert.equal(usage.inputTokens, 30 + 300);
    await turn(session, "q3");
    const call = model.doStreamCalls[3]!;
    assert.equal(call.prompt[0]?.role, "system");
    assert.match(
      String(call.prompt[0]?.content),
      /^Base\.\n\nSummary of the earlier conversation:\nThe user asked three/,
    );
    assert.deepEqual(promptOf(model, 3).slice(1), [
      { role: "user", text: "q2" },
      { role: "assistant", text: "answer 2" },
      { role: "user", text: "q3" },
    ]);
    assert.equal(session.getMessages().length, 9, "nothing was deleted: 8 messages and the marker");
    assert.equal((await storage.load(session.id))?.usage.compactions, 1);
  });

  it("compacts automatically before a turn once the last call's input reached the limit", async () => {
    const model = withSummary(
      scriptedModel((i) => ({ text: `a${i}`, usage: { input: 100 * (i + 1) } })),
      "S.",
    );
    const session = await createSession({ model, compaction: { maxInputTokens: 250, keepLastMessages: 1 } });
    for (const q of ["q0", "q1", "q2", "q3"]) await turn(session, q);
    // Inputs were 100, 200, 300: only the turn after the 300-token call starts with a compaction.
    assert.equal(session.getUsage().compactions, 1);
    assert.equal(model.doStreamCalls[2]?.prompt[0]?.role, "user");
    assert.match(
      String(model.doStreamCalls[3]?.prompt[0]?.content),
      /Summary of the earlier conversation:\nS\./,
    );
    assert.deepEqual(promptOf(model, 3).slice(1), [{ role: "user", text: "q3" }]);
  });

  it("returns undefined when there is nothing old enough to summarise", async () => {
    const session = await createSession({ model: scriptedModel([{ text: "one" }]) });
    await turn(session, "only");
    assert.equal(await session.compact({ keepLastMessages: 6 }), undefined);
    assert.equal(session.getUsage().compactions, 0);
  });

  it("throws SessionErrors: bad options INVALID_ARGUMENT, a failing model COMPACTION_REFUSED; null means no options", async () => {
    const model = withSummary(
      scriptedModel((i) => ({ text: `a${i}` })),
      "S.",
    );
    const session = await createSession({ model });
    for (const q of ["q0", "q1", "q2", "q3"]) await turn(session, q);
    for (const bad of [{ keepLastMessages: Number.NaN }, { keepLastMessages: 0 }, { instructions: 5 }, 7]) {
      await assert.rejects(session.compact(bad as never), { code: "INVALID_ARGUMENT" });
    }
    model.doGenerate = async () => {
      throw new Error("provider 529 overloaded");
    };
    await assert.rejects(session.compact(), (error: Error & { code?: string }) => {
      assert.equal(error.code, "COMPACTION_REFUSED");
      assert.equal(
        (error.cause as Error).message,
        "provider 529 overloaded",
        "the model's error is the cause",
      );
      return true;
    });
    assert.equal(session.running, false);
    withSummary(model, "S.");
    assert.equal((await session.compact(null))?.metadata?.synthetic, "compaction");
    await rejectsWithIssue(
      createSession({ model, compaction: { maxInputTokens: 100, keepLastMessages: "all" as never } }),
      { code: "INVALID_ARGUMENT", path: "compaction.keepLastMessages" },
    );
  });
});

describe("model ids", () => {
  it("maps ids and prefixes to provider packages", () => {
    assert.deepEqual(parseModelId("claude-sonnet-4-20250514"), {
      provider: "anthropic",
      modelId: "claude-sonnet-4-20250514",
    });
    assert.deepEqual(parseModelId("openai:gpt-4o"), { provider: "openai", modelId: "gpt-4o" });
    assert.deepEqual(parseModelId("gpt-4o-mini"), { provider: "openai", modelId: "gpt-4o-mini" });
    assert.deepEqual(parseModelId("google/gemini-2.5-flash"), {
      provider: "google",
      modelId: "gemini-2.5-flash",
    });
    assert.deepEqual(parseModelId("ollama:llama3.1:8b"), { provider: "ollama", modelId: "llama3.1:8b" });
    assert.throws(() => parseModelId("my-mystery-model"), { code: "INVALID_ARGUMENT" });
  });

  it("loads the provider through a dynamic import and calls its factory", async () => {
    const model = scriptedModel([]);
    const imported: string[] = [];
    const resolved = await resolveModel("openai:gpt-4o", async (name) => {
      imported.push(name);
      return { openai: (id: string) => Object.assign(model, { modelId: id }) };
    });
    assert.deepEqual(imported, ["@ai-sdk/openai"]);
    assert.equal(resolved.modelId, "gpt-4o");
  });

  it("names the package to install when the provider is missing", async () => {
    await assert.rejects(createSession({ model: "gpt-4o" }), {
      code: "MISSING_DEPENDENCY",
      dependency: "@ai-sdk/openai",
    });
    const missing = async (name: string) => {
      throw Object.assign(new Error(`Cannot find package '${name}'`), { code: "ERR_MODULE_NOT_FOUND" });
    };
    await assert.rejects(resolveModel("ollama:llama3", missing), {
      code: "MISSING_DEPENDENCY",
      dependency: "ollama-ai-provider-v2",
    });
  });
});
