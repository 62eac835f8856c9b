// A late answer (another request of the chat stored a message after its question while it streamed) is not
// stored, and its own response still ends cleanly: `turn.response(result)` ends the stream with a
// `data-answer-not-kept` part the page can show; the plain `streamOptions` route ends it normally too and reports
// the answer as one `AgentSessionChatWarning`. Run on the AI SDK major of the test run (ai@7, or ai@6 with
// AGENT_SESSION_AI=6).
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { AbstractChat, convertToModelMessages, DefaultChatTransport, streamText, type UIMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { type ChatTurn, NOT_KEPT_PART, persistChatTurn } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { ArrayState } from "./harness.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A model whose first answer waits on `release()` after its first words; `started` resolves when it streams. */
function gatedModel() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const streaming = new Promise<void>((resolve) => (started = resolve));
  let calls = 0;
  const model = new MockLanguageModelV3({
    doStream: async () => {
      const call = calls++;
      return {
        stream: new ReadableStream({
          async start(controller) {
            controller.enqueue({ type: "stream-start", warnings: [] });
            controller.enqueue({ type: "text-start", id: "t" });
            controller.enqueue({ type: "text-delta", id: "t", delta: `Answer ${call}, ` });
            if (call === 0) {
              started();
              await gate;
            }
            controller.enqueue({ type: "text-delta", id: "t", delta: "the end." });
            controller.enqueue({ type: "text-end", id: "t" });
            controller.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage });
            controller.close();
          },
        }),
      };
    },
  });
  return { model, release, streaming };
}

/** useChat's state machine without React; errors are collected, not thrown. */
class Page extends AbstractChat<UIMessage> {
  readonly errors: Error[] = [];
  constructor(id: string, route: (request: Request) => Promise<Response>) {
    const errors: Error[] = [];
    super({
      id,
      state: new ArrayState([]),
      transport: new DefaultChatTransport({
        api: "http://chat.test/api/chat",
        fetch: async (url, init) => route(new Request(url, init)),
      }),
      onError: (error) => errors.push(error),
    });
    this.errors = errors;
  }
}

type Respond = (turn: ChatTurn<UIMessage>, result: ReturnType<typeof streamText>) => Response;

function route(store: SessionStore, model: MockLanguageModelV3, respond: Respond) {
  return async (request: Request): Promise<Response> => {
    const { id, messages, trigger, messageId } = (await request.json()) as {
      id: string;
      messages: UIMessage[];
      trigger: "submit-message";
      messageId?: string;
    };
    const turn = await persistChatTurn(Session.create(store).forSession(id), {
      messages,
      trigger,
      messageId,
    });
    const result = streamText({ model, messages: await convertToModelMessages(turn.messages) });
    return respond(turn, result);
  };
}

const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
process.on("warning", onWarning);
afterEach(() => {
  warnings.length = 0;
});

const text = (id: string, role: "user" | "assistant", body: string): UIMessage => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});

/** Page A sends u1; while its answer streams, another request sends u2 after u1 and is answered; then A ends. */
async function lateAnswer(store: SessionStore, id: string, respond: Respond) {
  const { model, release, streaming } = gatedModel();
  const page = new Page(id, route(store, model, respond));
  const sent = page.sendMessage({ text: "Thursday?" });
  await streaming;
  const u1 = page.messages[0]!;
  // Another tab (or the page, reloaded mid-answer) sends the next message: u1 has no answer yet.
  const other = await persistChatTurn(Session.create(store).forSession(id), {
    messages: [u1, text("u2", "user", "Or Friday?")],
    trigger: "submit-message",
  });
  await other.onFinish({ responseMessage: text("a2", "assistant", "Friday too.") });
  release();
  await sent;
  await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  return { page, u1 };
}

const backends: Array<[string, () => SessionStore]> = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];

for (const [name, create] of backends) {
  describe(`a late answer ends its own response cleanly (${name})`, () => {
    test("turn.response: the stream finishes with a data-answer-not-kept part; the tree keeps u2", async () => {
      const store = create();
      try {
        const { page, u1 } = await lateAnswer(store, "late", (turn, result) => turn.response(result));
        assert.deepEqual(page.errors, []);
        assert.equal(page.status, "ready");
        const answer = page.messages[1]!;
        assert.equal(answer.role, "assistant");
        const part = answer.parts.find((p) => p.type === NOT_KEPT_PART) as
          | { data: { code: string; message: string; parentId: string } }
          | undefined;
        assert.ok(part, `a ${NOT_KEPT_PART} part: ${JSON.stringify(answer.parts)}`);
        assert.equal(part.data.code, "CONFLICT");
        assert.equal(part.data.parentId, u1.id);
        assert.match(part.data.message, /was not stored: another request of this chat stored a message/);
        const texts = answer.parts.flatMap((p) => (p.type === "text" ? [p.text] : []));
        assert.deepEqual(texts, ["Answer 0, the end."], "the text the page saw stays");
        assert.deepEqual(
          (await Session.create(store).forSession("late").getHistory()).map((m) => m.id),
          [u1.id, "u2", "a2"],
        );
        assert.deepEqual(warnings, [], "the page was told: nothing is logged");
      } finally {
        await store.close();
      }
    });

    test("streamOptions: the stream finishes normally, and the answer not kept is one AgentSessionChatWarning", async () => {
      const store = create();
      try {
        const { page, u1 } = await lateAnswer(store, "plain", (turn, result) =>
          result.toUIMessageStreamResponse(turn.streamOptions),
        );
        assert.deepEqual(page.errors, []);
        assert.equal(page.status, "ready");
        assert.equal(
          page.messages[1]?.parts.some((p) => p.type === NOT_KEPT_PART),
          false,
        );
        assert.deepEqual(
          (await Session.create(store).forSession("plain").getHistory()).map((m) => m.id),
          [u1.id, "u2", "a2"],
        );
        assert.deepEqual(
          warnings.map((w) => w.name),
          ["AgentSessionChatWarning"],
        );
        assert.match(warnings[0]!.message, /The answer to ".+" was not stored/);
      } finally {
        await store.close();
      }
    });

    test("turn.response on an answer that is kept: no data part, the answer stored, headers and status kept", async () => {
      const store = create();
      try {
        const { model, release } = gatedModel();
        release();
        const page = new Page(
          "kept",
          route(store, model, (turn, result) => {
            const response = turn.response(result, { headers: { "x-chat": "1" } });
            assert.equal(response.headers.get("x-chat"), "1");
            assert.equal(response.status, 200);
            return response;
          }),
        );
        await page.sendMessage({ text: "Thursday?" });
        assert.deepEqual(page.errors, []);
        assert.equal(
          page.messages[1]?.parts.some((p) => p.type === NOT_KEPT_PART),
          false,
        );
        const history = await Session.create(store).forSession("kept").getHistory();
        assert.deepEqual(
          history.map((m) => m.id),
          page.messages.map((m) => m.id),
        );
        assert.deepEqual(warnings, []);
      } finally {
        await store.close();
      }
    });
  });
}
