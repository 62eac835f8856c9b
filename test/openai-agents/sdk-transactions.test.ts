// The SDK's applyHistoryTransaction (after its memorySession transaction tests), on its MemorySession and on the
// adapter over memory, SQLite and Postgres; and a run whose output guardrail trips, stored as MemorySession stores it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  Agent,
  type AgentInputItem,
  type Model,
  type OutputGuardrail,
  run,
  type SessionHistoryTransactionAwareSession,
  setTracingDisabled,
  tool,
} from "@openai/agents-core";
import { z } from "zod";
import type { SessionIssueRule } from "../../src/errors.js";
import { MemoryStore } from "../../src/memory/store.js";
import { OpenAIAgentsSession } from "../../src/openai-agents/index.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { call, kindOf, ScriptedModel, said, sessionKinds, textOf, user } from "./sdk-helpers.js";

setTracingDisabled(true);

const texts = async (session: SessionHistoryTransactionAwareSession) =>
  (await session.getItems()).map(textOf);
const append = (operationId: string, items: AgentInputItem[]) => ({
  operationId,
  transaction: { type: "append_items" as const, items },
});
const replace = (operationId: string, expectedSuffix: AgentInputItem[], replacement: AgentInputItem[]) => ({
  operationId,
  transaction: { type: "replace_suffix" as const, expectedSuffix, replacement },
});

for (const [name, openAny] of sessionKinds()) {
  const open = (id: string) => openAny(id) as SessionHistoryTransactionAwareSession;
  describe(`applyHistoryTransaction (${name})`, () => {
    test("an append applies once: the same operation again changes nothing", async () => {
      const session = open("tx-append");
      await session.addItems([user("before")]);
      await session.applyHistoryTransaction(append("op-1", [user("a"), user("b")]));
      await session.applyHistoryTransaction(append("op-1", [user("a"), user("b")]));
      assert.deepEqual(await texts(session), ["before", "a", "b"]);
    });

    test("another transaction under a used operation id is refused, and nothing changes", async () => {
      const session = open("tx-reuse");
      await session.applyHistoryTransaction(append("op-1", [user("a")]));
      await assert.rejects(async () => session.applyHistoryTransaction(append("op-1", [user("other")])));
      assert.deepEqual(await texts(session), ["a"]);
    });

    test("a suffix is replaced once; a suffix that no longer matches is refused without a change", async () => {
      const session = open("tx-replace");
      await session.addItems([user("keep"), user("old 1"), user("old 2")]);
      await assert.rejects(async () =>
        session.applyHistoryTransaction(replace("op-x", [user("not there")], [user("new")])),
      );
      assert.deepEqual(await texts(session), ["keep", "old 1", "old 2"]);
      const op = replace("op-2", [user("old 1"), user("old 2")], [user("new")]);
      await session.applyHistoryTransaction(op);
      await session.applyHistoryTransaction(op);
      assert.deepEqual(await texts(session), ["keep", "new"]);
      await session.addItems([user("after")]);
      assert.deepEqual(await texts(session), ["keep", "new", "after"]);
    });

    test("the whole history as the suffix", async () => {
      const session = open("tx-whole");
      await session.addItems([user("x"), user("y")]);
      await session.applyHistoryTransaction(replace("op-3", [user("x"), user("y")], [user("z")]));
      assert.deepEqual(await texts(session), ["z"]);
    });

    test("bad arguments are refused before anything changes", async () => {
      const session = open("tx-bad");
      await session.addItems([user("a")]);
      for (const bad of [
        { operationId: "", transaction: { type: "append_items", items: [] } },
        { operationId: "op", transaction: { type: "drop_everything" } },
        { operationId: "op", transaction: { type: "append_items", items: "x" } },
        null,
      ]) {
        await assert.rejects(async () => session.applyHistoryTransaction(bad as never));
      }
      assert.deepEqual(await texts(session), ["a"]);
    });
  });

  describe(`an output guardrail that trips (${name})`, () => {
    test("the session keeps the turn's input and the tool call that ran, as MemorySession does", async () => {
      const session = open("guardrail");
      const model: Model = new ScriptedModel([
        [call("lookup", "c1", { q: "balance" })],
        [said("Your PIN is 1234.")],
      ]);
      const lookup = tool({
        name: "lookup",
        description: "Look something up",
        parameters: z.object({ q: z.string() }),
        execute: async ({ q }) => `found ${q}`,
      });
      const noSecrets: OutputGuardrail = {
        name: "no secrets",
        execute: async ({ agentOutput }) => ({
          tripwireTriggered: String(agentOutput).includes("PIN"),
          outputInfo: null,
        }),
      };
      const agent = new Agent({ name: "bank", model, tools: [lookup], outputGuardrails: [noSecrets] });
      await assert.rejects(run(agent, "what is my balance?", { session }), /Guardrail|tripwire/i);
      const kinds = (await session.getItems()).map(kindOf);
      assert.ok(
        !(await session.getItems()).some((item) => textOf(item).includes("PIN")),
        "the blocked answer is not kept",
      );
      guardrailKinds.set(name, kinds);
      if (name !== "the SDK's MemorySession")
        assert.deepEqual(kinds, guardrailKinds.get("the SDK's MemorySession"));
      assert.ok(
        kinds.includes("function_call_result"),
        `the tool call that ran is kept: ${kinds.join(", ")}`,
      );
    });
  });
}

/** What each kind of session kept of the blocked turn (MemorySession runs first: the reference). */
const guardrailKinds = new Map<string, string[]>();

test("the adapter refuses malformed transaction arguments before anything is written, naming the field", async () => {
  const session = new OpenAIAgentsSession(new MemoryStore(), "tx-refused");
  const refused: [unknown, string, SessionIssueRule][] = [
    [5, "", "type"],
    [{ operationId: " ", transaction: append("x", []).transaction }, "operationId", "format"],
    [{ operationId: "op", transaction: 5 }, "transaction", "type"],
    [{ operationId: "op", transaction: { type: "rewrite" } }, "transaction.type", "one_of"],
    [{ operationId: "op", transaction: { type: "append_items", items: [1] } }, "transaction.items.0", "type"],
    [replace("op", [], 3 as never), "transaction.replacement", "type"],
  ];
  for (const [args, path, rule] of refused)
    await rejectsWithIssue(session.applyHistoryTransaction(args as never), {
      code: "INVALID_ARGUMENT",
      path,
      rule,
    });
  assert.deepEqual(await session.getItems(), []);
});
