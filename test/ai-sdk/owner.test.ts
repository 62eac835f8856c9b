// Owners with the AI SDK: a route that opens the chat through `manager.forOwner(user).open(id)` registers a new
// chat as the user's, continues it on the next request, and refuses another user's chat (or an unregistered id
// holding messages) with NOT_FOUND before persistChatTurn stores anything.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { convertToModelMessages, type LanguageModel, streamText, type UIMessage } from "ai";
import { type ChatRequestBody, persistChatTurn } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, SessionManager, type SessionStore, SqliteStore } from "../../src/index.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";
import { NodeChat, textOf } from "./harness.js";

/** The README's route, with the chat opened as `user`'s. */
function ownerRoute(manager: SessionManager, user: string, model: LanguageModel) {
  return async (request: Request): Promise<Response> => {
    const { id, messages, trigger, messageId } = (await request.json()) as ChatRequestBody;
    const turn = await persistChatTurn(await manager.forOwner(user).open(id), {
      messages,
      trigger,
      messageId,
    });
    const result = streamText({ model, messages: await convertToModelMessages(turn.messages) });
    return result.toUIMessageStreamResponse(turn.streamOptions);
  };
}

const userMessage = (id: string, text: string): UIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});

for (const [name, create] of [
  ["memory", () => new MemoryStore()],
  ["SQLite", () => new SqliteStore(":memory:")],
] as Array<[string, () => SessionStore]>) {
  describe(`persistChatTurn with an owner (${name})`, () => {
    test("a new chat opened through the owner's view is the owner's; another owner's chat is NOT_FOUND", async () => {
      const store = create();
      const manager = new SessionManager(store);
      const chat = new NodeChat(
        "c1",
        ownerRoute(
          manager,
          "alice",
          scriptedModel((i) => ({ text: `answer ${i}` })),
        ),
      );
      await chat.sendMessage({ text: "first" });
      await chat.sendMessage({ text: "second" });
      assert.equal((await manager.get("c1"))?.owner, "alice");
      assert.deepEqual(chat.messages.map(textOf), ["first", "answer 0", "second", "answer 1"]);

      const bob = manager.forOwner("bob");
      await assert.rejects(bob.open("c1"), { code: "NOT_FOUND" });
      // Messages stored under an id nobody registered are no owner's: open refuses them too.
      await Session.create(store).forSession("loose").appendMessage(userMessage("u0", "loose"));
      await assert.rejects(bob.open("loose"), { code: "NOT_FOUND" });
      assert.equal(await manager.get("loose"), null);
      // bob's own chat works, and alice's history is unchanged by his attempts.
      await persistChatTurn(await bob.open("c2"), {
        messages: [userMessage("b1", "hi")],
        trigger: "submit-message",
      });
      assert.equal((await manager.get("c2"))?.owner, "bob");
      assert.equal((await manager.getSession("c1").getHistory()).length, 4);
      await manager.close();
    });
  });
}
