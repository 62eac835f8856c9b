import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { UIMessage } from "ai";
import { editedId } from "../../src/ai-sdk/edited-ids.js";
import { loadChat, persistChatTurn } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";
import { postgresStores } from "../fixtures/postgres-stores.js";
import { chatRoute, NodeChat, textOf } from "./harness.js";

const text = (id: string, role: "user" | "assistant", body: string): UIMessage => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});
const pathTexts = async (session: Session) =>
  (await session.getHistory()).map((m) => (m.parts[0] as { text: string }).text);

const postgres = await postgresStores("chat_turn_edges");
const backends: Array<[string, () => SessionStore]> = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];
if (postgres) backends.push(["postgres", postgres]);

/** u1 a1 u2 a2 u3 a3, with u1…a2 summarised: the page shows [summary, u3, a3]. */
async function compacted(store: SessionStore, id: string, to = "a2"): Promise<Session> {
  const session = Session.create(store).forSession(id);
  for (const [mid, role] of [
    ["u1", "user"],
    ["a1", "assistant"],
    ["u2", "user"],
    ["a2", "assistant"],
    ["u3", "user"],
    ["a3", "assistant"],
  ] as const) {
    await session.appendMessage(text(mid, role, mid));
  }
  await session.addCompaction("the summary", "u1", to);
  return session;
}

for (const [name, create] of backends) {
  describe(`persistChatTurn after a compaction overlay (${name})`, () => {
    test("an edit of the first message after the summary is a sibling of it", async () => {
      const session = await compacted(create(), "edit");
      const page = await loadChat(session);
      assert.equal(page.length, 3);
      const turn = await persistChatTurn(session, {
        messages: [page[0]!, text("u3", "user", "u3 edited")],
        trigger: "submit-message",
      });
      await turn.onFinish({ responseMessage: text("a4", "assistant", "a4") });
      assert.deepEqual(await pathTexts(session), ["the summary", "u3 edited", "a4"]);
      assert.deepEqual(
        (await session.getBranches("a2")).map((m) => m.parts[0]),
        [
          { type: "text", text: "u3" },
          { type: "text", text: "u3 edited" },
        ],
      );
    });

    test("a regenerate when the summary ends on the last request stores the answer under it", async () => {
      const session = await compacted(create(), "regen", "u3");
      const page = await loadChat(session); // [summary, a3]
      const turn = await persistChatTurn(session, {
        messages: [page[0]!],
        trigger: "regenerate-message",
      });
      assert.equal(turn.parentId, "u3");
      assert.deepEqual(
        turn.streamOptions.originalMessages.map((m) => m.id),
        [],
        "the summary the path ends on is not continued: the answer gets an id of its own",
      );
      await turn.onFinish({ responseMessage: text("a3b", "assistant", "again") });
      assert.deepEqual(
        (await session.getBranches("u3")).map((m) => m.id),
        ["a3", "a3b"],
      );
      assert.deepEqual(await pathTexts(session), ["the summary", "again"]);
    });

    test("useChat's regenerate when the summary ends on the last request: the streamed answer is stored", async () => {
      const store = create();
      const session = await compacted(store, "regen-stream", "u3");
      const chat = new NodeChat("regen-stream", chatRoute(store, scriptedModel([{ text: "again" }])));
      chat.messages = await loadChat(session); // [summary, a3]
      await chat.regenerate();
      const answers = await session.getBranches("u3");
      assert.deepEqual(
        answers.map((m) => m.parts[0]),
        [{ type: "text", text: "a3" }, { type: "step-start" }],
      );
      assert.equal(textOf(answers[1]), "again");
    });

    test("a message sent after a summary covering the whole path goes after its last message", async () => {
      const session = await compacted(create(), "whole", "a3");
      const page = await loadChat(session);
      assert.equal(page.length, 1);
      await persistChatTurn(session, { messages: [page[0]!, text("u4", "user", "u4")] });
      assert.deepEqual(await pathTexts(session), ["the summary", "u4"]);
    });

    test("a summary no longer stored is CONFLICT, and nothing is written", async () => {
      const session = await compacted(create(), "gone");
      const forged = { ...text("compaction_nope", "assistant", "old"), id: "compaction_nope" };
      await assert.rejects(persistChatTurn(session, { messages: [forged, text("u9", "user", "u9")] }), {
        code: "CONFLICT",
      });
      assert.equal(await session.getMessage("u9"), null);
    });
  });
}

describe("persistChatTurn refuses what it cannot read with a SessionError", () => {
  test("entries that are not messages, and parts JSON cannot hold", async () => {
    const session = Session.create(new MemoryStore()).forSession("bad");
    await session.appendMessage(text("u1", "user", "hi"));
    for (const request of [
      { messages: [null] },
      { messages: [undefined] },
      { message: null },
      { messages: [7] },
    ]) {
      await assert.rejects(persistChatTurn(session, request as never), {
        code: /INVALID_(MESSAGE|ARGUMENT)/,
      });
    }
    const deep: unknown[] = [];
    let inner = deep;
    for (let i = 0; i < 200_000; i++) inner = inner[0] = [] as unknown[];
    for (const parts of [[{ type: "data-x", data: 1n }], [{ type: "data-x", data: deep }]]) {
      await assert.rejects(
        persistChatTurn(session, { messages: [{ id: "u1", role: "user", parts } as never] }),
        {
          code: "INVALID_MESSAGE",
        },
      );
    }
    assert.deepEqual(await pathTexts(session), ["hi"]);
  });
});

describe("persistChatTurn through a storage without upsertMessage", () => {
  test("a client's continuation stores its tool result and cannot touch the stored metadata", async () => {
    const store = new MemoryStore({ reservedMetadataKeys: ["admin"] });
    const session = Session.create(store).forSession("r");
    const storage = {
      getMessage: (id: string) => session.getMessage(id),
      appendMessage: (m: UIMessage, p?: string | null, o?: { source?: "client" | "server" }) =>
        session.appendMessage(m, p, o),
      updateMessage: (m: UIMessage) => session.updateMessage(m),
      getHistory: (leaf?: string | null) => session.getHistory(leaf),
      getBranches: (id: string) => session.getBranches(id),
    };
    const call = { type: "tool-confirm", toolCallId: "c1", input: {} };
    await session.appendMessage(text("u1", "user", "hi"));
    await session.appendMessage({
      id: "a1",
      role: "assistant",
      parts: [{ ...call, state: "input-available" }],
      metadata: { admin: false, x: 1 },
    });
    const continued = {
      id: "a1",
      role: "assistant" as const,
      parts: [{ ...call, state: "output-available", output: "yes" }],
      metadata: { admin: true },
    };
    const turn = await persistChatTurn(storage, { messages: [text("u1", "user", "hi"), continued as never] });
    const stored = await session.getMessage("a1");
    assert.deepEqual(stored?.parts, continued.parts, "the tool result is stored");
    assert.deepEqual(stored?.metadata, { admin: false, x: 1 }, "the stored metadata is kept");
    await turn.onFinish({ responseMessage: { ...turn.messages.at(-1)!, parts: continued.parts as never } });
    assert.deepEqual((await session.getMessage("a1"))?.metadata, { admin: false, x: 1 });
  });
});

describe("edited ids", () => {
  test("two edits whose 32-bit FNV-1a hashes collide get different ids, each stored on its own", async () => {
    const a = text("u1", "user", "please rewrite this 112789");
    const b = text("u1", "user", "please rewrite this 349192");
    assert.notEqual(editedId(a), editedId(b));

    const session = Session.create(new MemoryStore()).forSession("e");
    await session.appendMessage(text("u1", "user", "original"));
    const first = await persistChatTurn(session, { messages: [a] });
    assert.equal(first.parentId, editedId(a));
    const again = await persistChatTurn(session, { messages: [a] });
    assert.equal(again.parentId, editedId(a), "the stored edit is found, not stored twice");
    const other = await persistChatTurn(session, { messages: [b] });
    assert.equal(other.parentId, editedId(b), "a colliding edit is stored on its own");
    assert.deepEqual((await session.getMessage(editedId(b)))?.parts, b.parts);
  });
});
