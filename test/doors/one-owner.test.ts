// One user through every door of one store: a chat session, a LangGraph thread (AgentSessionSaver, `user_id`), a
// Mastra thread (`resourceId`) and an eve principal's memory are the same owner's data: listed and searched together,
// sealed together under the owner's key, and gone together after eraseOwner + purge, while another user's data through
// the same doors stays. Every backend the eve door runs on; Node >= 24 (eve; Mastra needs 22.13).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Memory } from "@mastra/memory";
import { agentSessionMemory } from "../../src/eve/index.js";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import { mastraStorage } from "../../src/mastra/index.js";
import { assistant, EVE_SKIP, turnCompleted, user } from "../eve/contexts.js";
import { backends, type Store, type Target } from "../eve/targets.js";
import { randomKeyring } from "../helpers/encryption.js";
import { purgeUntilComplete } from "../helpers/purge.js";

/** A word per door, and what each says of it, for alice and for bob. */
const DOORS = ["chat", "graph", "mastra", "eve"] as const;
const word = (door: string, who: string) => `zqx${door}${who}wordq`;

/** Everything `who` says, once through each door. */
async function speak(store: Store, manager: SessionManager, who: string): Promise<void> {
  const chat = await manager.forOwner(who).open(`chat-${who}`);
  await chat.appendMessage({ id: "c1", role: "user", parts: [{ type: "text", text: word("chat", who) }] });

  // The graph's messages channel (LangChain messages) is what the saver recalls into the thread's session.
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("echo", () => ({ messages: [new AIMessage("Noted.")] }))
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile({ checkpointer: new AgentSessionSaver(store, { ownerKey: "user_id" }) });
  await graph.invoke(
    { messages: [new HumanMessage(word("graph", who))] },
    { configurable: { thread_id: `graph-${who}`, user_id: who } },
  );

  const memory = new Memory({ storage: mastraStorage(store) });
  await memory.saveThread({
    thread: {
      id: `mastra-${who}`,
      resourceId: who,
      title: "trip",
      metadata: {},
      createdAt: new Date(),
      updatedAt: new Date(),
    },
  });
  await memory.saveMessages({
    messages: [
      {
        id: `m-${who}`,
        threadId: `mastra-${who}`,
        resourceId: who,
        role: "user",
        createdAt: new Date(),
        content: { format: 2, parts: [{ type: "text", text: word("mastra", who) }] },
      },
    ],
  });

  const eve = agentSessionMemory({ manager });
  const said = user(`Remember ${word("eve", who)}`);
  await eve.capture?.["turn.completed"]?.(
    turnCompleted({ principal: who, eveSession: `eve-${who}` }, "t1", 1, [said], [said, assistant("Noted.")]),
  );
}

async function scenario(target: Target, keyed: boolean): Promise<void> {
  const store = await target.open(keyed ? randomKeyring(["alice"]) : undefined);
  const manager = new SessionManager(store);
  await speak(store, manager, "alice");
  await speak(store, manager, "bob");

  // Listed and searched as one owner's data: four sessions, one per door, each word found.
  const sessions = await manager.forOwner("alice").list();
  assert.equal(sessions.length, 4, JSON.stringify(sessions.map((s) => [s.id, s.source])));
  for (const door of DOORS) {
    const hits = await manager.forOwner("alice").search(word(door, "alice"));
    assert.ok(hits.length > 0, `alice's search finds what she said through ${door}`);
    assert.deepEqual(
      await manager.forOwner("bob").search(word(door, "alice")),
      [],
      `bob never reads ${door}`,
    );
  }

  // Sealed together: an encrypted owner's words are nowhere in clear; in clear they are (so the scans mean something).
  for (const door of DOORS) {
    const found = await target.onDisk(word(door, "alice"));
    if (keyed) assert.equal(found, 0, `alice's ${door} word in clear on disk`);
    else assert.ok(found > 0, `alice's ${door} word should be on disk before the erasure`);
  }

  // Erased together: no byte of any door's data after eraseOwner + purge; bob's stays.
  const receipt = await manager.eraseOwner("alice");
  assert.equal(receipt.sessions, 4);
  assert.equal((await purgeUntilComplete(() => store.purge())).complete, true);
  await store.close();
  for (const door of DOORS) {
    assert.equal(
      await target.onDisk(word(door, "alice")),
      0,
      `alice's ${door} word on disk after the erasure`,
    );
    assert.ok((await target.onDisk(word(door, "bob"))) > 0, `bob's ${door} word kept`);
  }
}

for (const backend of EVE_SKIP ? [] : await backends()) {
  describe(`one owner through every door: ${backend.name}`, async () => {
    const skip = await backend.skip();
    for (const keyed of [false, true]) {
      test(keyed ? "an encrypted owner" : "an owner without a key", { skip: skip ?? false }, async () => {
        const target = await backend.target();
        try {
          await scenario(target, keyed);
        } finally {
          await target.end();
        }
      });
    }
  });
}
if (EVE_SKIP) test("one owner through every door", { skip: EVE_SKIP }, () => {});
