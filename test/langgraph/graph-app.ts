// The graph test's app (graph.test.ts): a StateGraph over MessagesAnnotation with a tool-calling chat model, a
// ToolNode and an interrupt, and the words its turns say. Run as a script (`<file> <sqlite path> [key hex]`), it is
// another process resuming the interrupted thread "t-graph" of alice on that file.
import assert from "node:assert/strict";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { Command, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";

// The first turn's words (the user's, the tool's), the second turn's, the fork's: one word each, as the index keeps terms.
export const FIRST = "zqxflamingoq";
export const TOOLWORD = "zqxlagoonq";
export const SECOND = "zqxpelicanq";
export const FORK = "zqxotterq";

/** A chat model that calls the weather tool when asked about the weather, and otherwise answers what it was told. */
class ScriptedModel extends BaseChatModel {
  _llmType(): string {
    return "scripted";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages[messages.length - 1] as BaseMessage;
    const said = typeof last.content === "string" ? last.content : "";
    const message =
      last.getType() === "tool"
        ? new AIMessage(`The report says: ${said}`)
        : said.includes("weather")
          ? new AIMessage({
              content: "",
              tool_calls: [{ id: "call-weather-1", name: "weather", args: { place: FIRST } }],
            })
          : new AIMessage(`You said: ${said}`);
    return { generations: [{ text: said, message }] };
  }
}

const weather = tool(
  async ({ place }: { place: string }) => `Sunny over the ${TOOLWORD} where the ${place} lives`,
  {
    name: "weather",
    description: "The weather at a place",
    schema: z.object({ place: z.string() }),
  },
);

/** The graph: agent → (a tool call) review, which interrupts → tools → agent; no tool call ends the turn. */
export function graphOf(checkpointer: AgentSessionSaver) {
  const model = new ScriptedModel({});
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("review", async () => {
      const answer = interrupt("run the tool?");
      assert.equal(answer, "approved");
      return {};
    })
    .addNode("tools", new ToolNode([weather]))
    .addEdge(START, "agent")
    .addConditionalEdges(
      "agent",
      (state) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? "review" : END),
      ["review", END],
    )
    .addEdge("review", "tools")
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}

/** The run config of the scenario's thread. */
export const THREAD = { configurable: { thread_id: "t-graph", user_id: "alice" } };

/** Resumes the interrupted thread through `saver`; answers the last message's text. */
export async function resume(saver: AgentSessionSaver): Promise<string> {
  const resumed = await graphOf(saver).invoke(new Command({ resume: "approved" }), THREAD);
  return String(resumed.messages.at(-1)?.content);
}

if (process.argv[1]?.endsWith("graph-app.ts")) {
  const [path, keyHex] = process.argv.slice(2);
  const key = keyHex ? new Uint8Array(Buffer.from(keyHex, "hex")) : undefined;
  const store = new SqliteStore(
    path as string,
    key ? { keyring: { key: (o) => (o === "alice" ? key : undefined) } } : {},
  );
  try {
    process.stdout.write(await resume(new AgentSessionSaver(store, { ownerKey: "user_id" })));
  } finally {
    await store.close();
  }
}
