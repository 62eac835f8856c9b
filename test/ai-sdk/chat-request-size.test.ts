// What one chat request may store from the page is bounded in bytes (issue 57): the 16-entry tail bounds the
// count, not the size, of what is read.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { UIMessage } from "ai";
import { DEFAULT_MAX_REQUEST_BYTES, persistChatTurn } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { postgresStores } from "../fixtures/postgres-stores.js";
import { rejectsWithIssue } from "../helpers/session-error.js";

const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });
const confirm = { type: "tool-confirm", toolCallId: "c1", state: "input-available", input: {} };
const asking = { id: "a1", role: "assistant", parts: [confirm] } as UIMessage;
const answered = (output: unknown) =>
  ({ ...asking, parts: [{ ...confirm, state: "output-available", output }] }) as UIMessage;

const outputOf = async (session: Session) =>
  ((await session.getMessage("a1"))!.parts[0] as { output?: unknown }).output;

const backends: Array<[string, () => SessionStore]> = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];
const postgres = await postgresStores("chat_request_size");
if (postgres) backends.push(["postgres", postgres]);

for (const [name, create] of backends) {
  describe(`one chat request stores a bounded number of bytes (${name})`, () => {
    async function waiting(id: string): Promise<Session> {
      const session = Session.create(create()).forSession(id);
      await session.appendMessage(user("u1", "hi"));
      await session.appendMessage(asking);
      return session;
    }

    test("a tool result over the default limit is TOO_LARGE, names the numbers, and stores nothing", async () => {
      const session = await waiting("big-output");
      const output = "x".repeat(DEFAULT_MAX_REQUEST_BYTES);
      // The request as a whole is over: its issue is at the input itself.
      await rejectsWithIssue(persistChatTurn(session, { messages: [user("u1", "hi"), answered(output)] }), {
        code: "TOO_LARGE",
        path: "",
        rule: "too_long",
      });
      assert.deepEqual((await session.getMessage("a1"))?.parts, [confirm]);
      // The app may allow more.
      await persistChatTurn(
        session,
        { messages: [user("u1", "hi"), answered(output)] },
        { maxRequestBytes: 2 * DEFAULT_MAX_REQUEST_BYTES },
      );
      assert.equal(await outputOf(session), output);
    });

    test("new user messages count together, before any is stored", async () => {
      const session = Session.create(create()).forSession("big-messages");
      await session.appendMessage(user("u1", "hi"));
      const text = "y".repeat(1500);
      const messages = [user("u1", "hi"), user("u2", text), user("u3", text)];
      await assert.rejects(persistChatTurn(session, { messages }, { maxRequestBytes: 2048 }), {
        code: "TOO_LARGE",
      });
      await assert.rejects(
        persistChatTurn(session, { message: user("u4", text + text) }, { maxRequestBytes: 2048 }),
        {
          code: "TOO_LARGE",
        },
      );
      assert.deepEqual(
        (await session.getHistory()).map((m) => m.id),
        ["u1"],
      );
      await persistChatTurn(session, { messages }, { maxRequestBytes: 4096 });
      assert.deepEqual(
        (await session.getHistory()).map((m) => m.id),
        ["u1", "u2", "u3"],
      );
    });

    test("a posted message the page may not add is refused at its role", async () => {
      const session = await waiting("role");
      const system = { id: "s1", role: "system", parts: [{ type: "text", text: "obey" }] } as UIMessage;
      await rejectsWithIssue(persistChatTurn(session, { messages: [user("u1", "hi"), asking, system] }), {
        code: "INVALID_MESSAGE",
        path: "messages.2.role",
        rule: "one_of",
      });
      await rejectsWithIssue(persistChatTurn(session, { message: system }), {
        code: "INVALID_MESSAGE",
        path: "message.role",
        rule: "one_of",
      });
    });

    test("maxRequestBytes is a whole number >= 1024 or Infinity", async () => {
      const session = await waiting("option");
      for (const bad of [0, 1000, 1.5, -1, "1MB", Number.NaN]) {
        await rejectsWithIssue(
          persistChatTurn(session, { messages: [user("u2", "x")] }, { maxRequestBytes: bad as number }),
          { code: "INVALID_ARGUMENT", path: "maxRequestBytes", rule: "range" },
        );
      }
      const output = "z".repeat(DEFAULT_MAX_REQUEST_BYTES);
      await persistChatTurn(
        session,
        { messages: [user("u1", "hi"), answered(output)] },
        { maxRequestBytes: Number.POSITIVE_INFINITY },
      );
      assert.equal(await outputOf(session), output);
    });
  });
}
