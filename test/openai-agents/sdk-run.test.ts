// run() with a session, as the Agents SDK's runner tests drive it (replay, input callbacks, streaming, tools,
// approvals across runs, a failed model call and its retry), held on the SDK's MemorySession and on the adapter.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Agent, type Model, run, setTracingDisabled, tool } from "@openai/agents-core";
import { z } from "zod";
import { call, inputOf, kindOf, ScriptedModel, said, sessionKinds, textOf } from "./sdk-helpers.js";

setTracingDisabled(true);

const remember = (needsApproval = false) =>
  tool({
    name: "remember",
    description: "Remember a fact",
    parameters: z.object({ fact: z.string() }),
    needsApproval,
    execute: async ({ fact }) => `remembered: ${fact}`,
  });

const helper = (model: Model, needsApproval = false) =>
  new Agent({ name: "helper", instructions: "Be brief.", model, tools: [remember(needsApproval)] });

for (const [name, open] of sessionKinds()) {
  describe(`run() with a session (${name})`, () => {
    test("a run stores its input and output, and the next run replays them first", async () => {
      const session = open("replay");
      const model = new ScriptedModel([[said("Hello!")], [said("You said hi.")]]);
      await run(helper(model), "hi", { session });
      await run(helper(model), "what did I say?", { session });
      assert.deepEqual(inputOf(model.requests[1]).map(textOf), ["hi", "Hello!", "what did I say?"]);
      assert.deepEqual((await session.getItems()).map(textOf), [
        "hi",
        "Hello!",
        "what did I say?",
        "You said hi.",
      ]);
    });

    test("a sessionInputCallback decides what the model sees; the session still stores the new input", async () => {
      const session = open("callback");
      const model = new ScriptedModel([[said("one")], [said("two")]]);
      await run(helper(model), "first", { session });
      await run(helper(model), "second", {
        session,
        sessionInputCallback: (history, newItems) => [...history.slice(-1), ...newItems],
      });
      assert.deepEqual(inputOf(model.requests[1]).map(textOf), ["one", "second"]);
      assert.deepEqual((await session.getItems()).map(textOf), ["first", "one", "second", "two"]);
    });

    test("a tool call and its result are stored between the input and the answer", async () => {
      const session = open("tools");
      const model = new ScriptedModel([[call("remember", "c1", { fact: "tea" })], [said("Noted.")]]);
      const result = await run(helper(model), "I like tea", { session });
      assert.equal(result.finalOutput, "Noted.");
      assert.deepEqual((await session.getItems()).map(kindOf), [
        "message:user",
        "function_call",
        "function_call_result",
        "message:assistant",
      ]);
      const replay = new ScriptedModel([[said("Tea.")]]);
      await run(helper(replay), "what do I like?", { session });
      assert.deepEqual(inputOf(replay.requests[0]).map(kindOf).slice(0, 4), [
        "message:user",
        "function_call",
        "function_call_result",
        "message:assistant",
      ]);
    });

    test("a streamed run stores the same items once its stream is read", async () => {
      const session = open("stream");
      const model = new ScriptedModel([[call("remember", "c1", { fact: "jazz" })], [said("Got it.")]]);
      const result = await run(helper(model), "I like jazz", { session, stream: true });
      for await (const _event of result) {
        // read to the end
      }
      await result.completed;
      assert.equal(result.finalOutput, "Got it.");
      assert.deepEqual((await session.getItems()).map(kindOf), [
        "message:user",
        "function_call",
        "function_call_result",
        "message:assistant",
      ]);
    });

    test("an approval across runs: the call waits, the approved run stores its result and answer once", async () => {
      const session = open("approval");
      const model = new ScriptedModel([[call("remember", "c1", { fact: "blue" })], [said("Saved.")]]);
      const agent = helper(model, true);
      const first = await run(agent, "remember blue", { session });
      assert.equal(first.interruptions.length, 1);
      assert.deepEqual((await session.getItems()).map(kindOf), ["message:user", "function_call"]);
      first.state.approve(first.interruptions[0]!);
      const second = await run(agent, first.state, { session });
      assert.equal(second.finalOutput, "Saved.");
      assert.deepEqual((await session.getItems()).map(kindOf), [
        "message:user",
        "function_call",
        "function_call_result",
        "message:assistant",
      ]);
    });

    test("a rejected approval stores the refusal as the call's result", async () => {
      const session = open("rejected");
      const model = new ScriptedModel([[call("remember", "c1", { fact: "red" })], [said("Not saved.")]]);
      const agent = helper(model, true);
      const first = await run(agent, "remember red", { session });
      first.state.reject(first.interruptions[0]!);
      await run(agent, first.state, { session });
      const items = await session.getItems();
      assert.deepEqual(items.map(kindOf), [
        "message:user",
        "function_call",
        "function_call_result",
        "message:assistant",
      ]);
      assert.doesNotMatch(JSON.stringify(items[2]), /remembered: red/);
    });

    test("compaction fallback: a compaction item replaces the history it covers (clear, then add), as MemorySession", async () => {
      const session = open("compaction");
      await session.addItems([
        { role: "user", content: "old question" },
        { role: "assistant", status: "completed", content: [{ type: "output_text", text: "old answer" }] },
      ]);
      const compaction = { type: "compaction", id: "cmp_1", encrypted_content: "opaque" } as const;
      const model = new ScriptedModel([[compaction, said("Fresh start.")]]);
      await run(helper(model), "go on", { session });
      const kinds = (await session.getItems()).map(kindOf);
      compactionKinds.set(name, kinds);
      assert.deepEqual(kinds, compactionKinds.get("the SDK's MemorySession"));
      assert.ok(!(await session.getItems()).some((item) => textOf(item) === "old answer"), kinds.join(", "));
    });

    test("a model call that fails rejects the run; a retry answers after what the session kept", async () => {
      const session = open("retry");
      let failing = true;
      const model = new ScriptedModel([
        () => {
          if (failing) throw new Error("model unavailable");
          return [said("unused")];
        },
        [said("Back.")],
      ]);
      await assert.rejects(run(helper(model), "are you there?", { session }), /model unavailable/);
      failing = false;
      const kept = (await session.getItems()).map(textOf);
      await run(helper(model), "retry", { session });
      assert.deepEqual((await session.getItems()).map(textOf), [...kept, "retry", "Back."]);
    });
  });
}

/** What each kind of session holds after a compaction (MemorySession runs first: the reference). */
const compactionKinds = new Map<string, string[]>();
