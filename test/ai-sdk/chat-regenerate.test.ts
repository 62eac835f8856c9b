// A regenerate request whose last entry is the answer it regenerates (a hand-written client, a curl test): the
// request says "regenerate", so the new answer is a sibling of the old one, never appended to it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { UIMessage } from "ai";
import { loadChat, persistChatTurn } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { postgresStores } from "../fixtures/postgres-stores.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { textOf } from "./harness.js";

const text = (id: string, role: "user" | "assistant", body: string): UIMessage => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});

const postgres = await postgresStores("chat_regenerate");
const backends: Array<[string, () => SessionStore]> = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];
if (postgres) backends.push(["postgres", postgres]);

/** u1 a1 u2 a2: the page's copy, and a session that stores it. */
async function chat(store: SessionStore, id: string): Promise<{ session: Session; page: UIMessage[] }> {
  const session = Session.create(store).forSession(id);
  const page = [
    text("u1", "user", "When can we meet?"),
    text("a1", "assistant", "Monday."),
    text("u2", "user", "Another day?"),
    text("a2", "assistant", "Better on Thursday morning."),
  ];
  for (const message of page) await session.appendMessage(message);
  return { session, page };
}

for (const [name, create] of backends) {
  describe(`a regenerate that ends on the answer it regenerates (${name})`, () => {
    test("the new answer is a sibling of the old one, which keeps its text", async () => {
      const { session, page } = await chat(create(), "r1");
      const turn = await persistChatTurn(session, {
        messages: page,
        trigger: "regenerate-message",
        messageId: "a2",
      });
      assert.equal(turn.parentId, "u2");
      assert.deepEqual(
        turn.streamOptions.originalMessages.map((m) => m.id),
        ["u1", "a1", "u2"],
        "the stream makes a new message: the old answer is not continued",
      );
      await turn.onFinish({ responseMessage: text("a2b", "assistant", "Friday is fine too.") });
      assert.deepEqual(
        (await session.getBranches("u2")).map((m) => textOf(m)),
        ["Better on Thursday morning.", "Friday is fine too."],
      );
      assert.deepEqual(
        (await session.getHistory()).map((m) => m.id),
        ["u1", "a1", "u2", "a2b"],
      );
    });

    test("without messageId, and for an earlier answer of the path, the same", async () => {
      const { session, page } = await chat(create(), "r2");
      const turn = await persistChatTurn(session, {
        messages: page.slice(0, 2),
        trigger: "regenerate-message",
      });
      assert.equal(turn.parentId, "u1");
      await turn.onFinish({ responseMessage: text("a1b", "assistant", "Tuesday.") });
      assert.deepEqual(
        (await session.getBranches("u1")).map((m) => m.id),
        ["a1", "a1b"],
      );
    });

    test("a messageId that names another message contradicts the request: INVALID_ARGUMENT", async () => {
      const { session, page } = await chat(create(), "r3");
      await rejectsWithIssue(
        persistChatTurn(session, { messages: page, trigger: "regenerate-message", messageId: "a1" }),
        { code: "INVALID_ARGUMENT", path: "messageId", rule: "conflict" },
      );
      // useChat's regenerate({ messageId: "a1" }) posts the conversation up to u1: accepted.
      const turn = await persistChatTurn(session, {
        messages: page.slice(0, 1),
        trigger: "regenerate-message",
        messageId: "a1",
      });
      assert.equal(turn.parentId, "u1");
      await rejectsWithIssue(
        persistChatTurn(session, {
          messages: page.slice(0, 1),
          trigger: "regenerate-message",
          messageId: "a2",
        }),
        { code: "INVALID_ARGUMENT", path: "messageId", rule: "conflict" },
      );
      await rejectsWithIssue(
        persistChatTurn(session, { messages: page, trigger: "regenerate-message", messageId: 7 as never }),
        { code: "INVALID_ARGUMENT", path: "messageId" },
      );
      assert.equal((await session.getHistory()).length, 4, "nothing was stored");
    });

    test("an answer the store does not have cannot be regenerated: CONFLICT", async () => {
      const { session, page } = await chat(create(), "r4");
      await assert.rejects(
        persistChatTurn(session, {
          messages: [...page.slice(0, 3), text("a-unknown", "assistant", "?")],
          trigger: "regenerate-message",
        }),
        { code: "CONFLICT" },
      );
    });

    test("a submit that ends on the answer still continues it (the tool-result path)", async () => {
      const { session, page } = await chat(create(), "r5");
      const turn = await persistChatTurn(session, { messages: page, trigger: "submit-message" });
      assert.equal(turn.parentId, "a2");
    });

    test("after the regenerated answer is deleted, the first answer is back: a stale page reloads, then sends", async () => {
      const { session, page } = await chat(create(), "r6");
      const turn = await persistChatTurn(session, { messages: page, trigger: "regenerate-message" });
      await turn.onFinish({ responseMessage: text("a2b", "assistant", "Friday is fine too.") });
      // The deleted tip gives way to the newest leaf below its parent: the first answer is back (#92 item 1).
      await session.deleteMessages(["a2b"]);
      assert.equal((await session.getLatestLeaf())?.id, "a2");
      // A page still ending at the question does not show that answer: CONFLICT, reload (AI-SDK.md).
      const question = [...page.slice(0, 3), text("u3", "user", "Actually, any evening?")];
      await assert.rejects(persistChatTurn(session, { messages: question, trigger: "submit-message" }), {
        code: "CONFLICT",
      });
      const reloaded = await loadChat(session);
      assert.deepEqual(
        reloaded.map((m) => m.id),
        ["u1", "a1", "u2", "a2"],
      );
      const send = await persistChatTurn(session, {
        messages: [...reloaded, text("u3", "user", "Actually, any evening?")],
        trigger: "submit-message",
      });
      assert.equal(send.parentId, "u3");
      assert.deepEqual(
        (await session.getBranches("a2")).map((m) => m.id),
        ["u3"],
      );
    });
  });
}
