import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  setTracingDisabled,
  tool,
  Usage,
} from "@openai/agents-core";
import { z } from "zod";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { OpenAIAgentsSession } from "../../src/openai-agents/index.js";
import { postgresStores } from "../fixtures/postgres-stores.js";
import { assertSessionError, rejectsWithIssue } from "../helpers/session-error.js";

setTracingDisabled(true);

/** A model that asks for the `remember` tool on the first call of a run and answers with text after it. */
class FakeModel implements Model {
  readonly requests: ModelRequest[] = [];

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const input = typeof request.input === "string" ? [] : request.input;
    const last = input[input.length - 1] as { type?: string } | undefined;
    const answer = `answer ${this.requests.length}`;
    const output: ModelResponse["output"] =
      last?.type === "function_call_result"
        ? [
            {
              type: "message",
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text: answer }],
            },
          ]
        : [
            {
              type: "function_call",
              callId: `call-${this.requests.length}`,
              name: "remember",
              arguments: JSON.stringify({ fact: "likes tea" }),
              status: "completed",
            },
          ];
    return { usage: new Usage(), output };
  }

  // biome-ignore lint/correctness/useYield: the runner in these tests never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not streamed in these tests");
  }
}

function agent(model: Model) {
  const remember = tool({
    name: "remember",
    description: "Remember a fact",
    parameters: z.object({ fact: z.string() }),
    execute: async ({ fact }) => `remembered: ${fact}`,
  });
  return new Agent({ name: "helper", instructions: "Be brief.", model, tools: [remember] });
}

const typeOf = (item: AgentInputItem) => ("type" in item && item.type) || "message";

const postgres = await postgresStores("openai_agents");
const backends: Array<[string, () => SessionStore]> = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];
if (postgres) backends.push(["postgres", postgres]);

for (const [name, create] of backends) {
  describe(`OpenAIAgentsSession (${name})`, () => {
    test("run(agent, input, { session }) persists every item and replays them on the next run", async () => {
      const store = create();
      const model = new FakeModel();
      const session = new OpenAIAgentsSession(store, "agent-1");
      assert.equal(await session.getSessionId(), "agent-1");
      const first = await run(agent(model), "I like tea", { session });
      assert.equal(first.finalOutput, "answer 2");
      const items = await session.getItems();
      assert.deepEqual(items.map(typeOf), ["message", "function_call", "function_call_result", "message"]);
      await run(agent(model), "What do I like?", { session });
      const replayed = model.requests[2]!.input as AgentInputItem[];
      assert.deepEqual(replayed.slice(0, 4), items, "the second run sees the first run's items as stored");
      const history = await Session.create(store).forSession("agent-1").getHistory();
      assert.deepEqual(
        history.map((m) => m.role),
        ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"],
      );
      assert.equal(history[0]!.parts[0]?.text, "I like tea");
      assert.equal(history[1]!.parts[0]?.text, 'remember({"fact":"likes tea"})');
      const hits = await Session.create(store).forSession("agent-1").search("tea");
      assert.ok(hits.length >= 2, "items are searchable");
    });

    test("getItems(limit), popItem and clearSession", async () => {
      const session = new OpenAIAgentsSession(Session.create(create()).forSession("s"));
      const items: AgentInputItem[] = [
        { role: "user", content: "one" },
        { role: "assistant", status: "completed", content: [{ type: "output_text", text: "two" }] },
        { role: "user", content: [{ type: "input_text", text: "three" }] },
      ];
      await session.addItems(items);
      assert.deepEqual(await session.getItems(2), items.slice(1));
      assert.deepEqual(await session.getItems(10), items);
      assert.deepEqual(await session.getItems(0), []);
      assert.deepEqual(await session.getItems(-1), [], "as the SDK: a limit <= 0 asks for nothing");
      await assert.rejects(session.getItems(1.5), { code: "INVALID_ARGUMENT" });
      assert.deepEqual(await session.popItem(), items[2]);
      assert.deepEqual(await session.getItems(), items.slice(0, 2));
      await session.clearSession();
      assert.deepEqual(await session.getItems(), []);
      assert.equal(await session.popItem(), undefined);
    });
  });
}

test("a compaction overlay reads back as a system item", async () => {
  const store = new MemoryStore();
  const session = new OpenAIAgentsSession(store, "c");
  await session.addItems([
    { role: "user", content: "a" },
    { role: "user", content: "b" },
    { role: "user", content: "c" },
  ]);
  const [first, second] = await session.session.getHistory();
  await session.session.addCompaction("the user said a and b", first!.id, second!.id);
  assert.deepEqual(await session.getItems(), [
    { role: "system", content: "the user said a and b" },
    { role: "user", content: "c" },
  ]);
});

test("a function_call item whose name or arguments cannot be printed is stored, not a TypeError", async () => {
  const session = new OpenAIAgentsSession(new MemoryStore(), "odd");
  const name = Object.create(null) as unknown as string;
  const item = { type: "function_call", callId: "c1", name, arguments: "{}" } as AgentInputItem;
  await session.addItems([item]);
  assert.equal((await session.getItems()).length, 1);
});

test("a refused argument names itself in the issues", async () => {
  const session = Session.create(new MemoryStore()).forSession("a");
  assertSessionError(() => new OpenAIAgentsSession(session, "b"), {
    code: "INVALID_ARGUMENT",
    path: "sessionId",
    rule: "conflict",
  });
  await rejectsWithIssue(new OpenAIAgentsSession(session).addItems("x" as never), {
    code: "INVALID_ARGUMENT",
    path: "items",
    rule: "type",
  });
});
