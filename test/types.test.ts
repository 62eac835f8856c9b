import assert from "node:assert/strict";
import { test } from "node:test";
import { convertToModelMessages, generateId, simulateReadableStream, streamText, type UIMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { type ChatRequestBody, loadChat, persistChatTurn } from "../src/ai-sdk/index.js";
import {
  MemorySessionProvider,
  MemoryStore,
  MemoryStoreProvider,
  Session,
  SessionManager,
  type SessionMessage,
  type SessionProvider,
  type SessionStore,
  SqliteSessionProvider,
  SqliteStore,
  SqliteStoreProvider,
} from "../src/index.js";

test("an AI SDK UIMessage is a SessionMessage without a cast, and comes back equal", async () => {
  const ui: UIMessage<{ model: string }> = {
    id: "m1",
    role: "assistant",
    metadata: { model: "gpt" },
    parts: [
      { type: "text", text: "hi", state: "done" },
      { type: "reasoning", text: "because", providerMetadata: { x: { y: 1 } } },
      {
        type: "dynamic-tool",
        toolName: "t",
        toolCallId: "c",
        state: "output-available",
        input: { a: 1 },
        output: [1],
      },
      { type: "source-url", sourceId: "s", url: "https://example.com" },
      { type: "file", mediaType: "text/plain", url: "data:text/plain,hi" },
      { type: "step-start" },
    ],
  };
  const asSession: SessionMessage = ui;
  const session = Session.create(new MemoryStore());
  await session.appendMessage(ui);
  assert.deepEqual(await session.getMessage("m1"), asSession);
  const history: UIMessage[] = await loadChat(session);
  assert.equal(history[0]?.parts.length, 6);
});

// --- Typed sessions: `Session<M>` reads and writes the app's own UIMessage type with no cast -----------------------
// These are compile-time assertions (`tsc -p tsconfig.json`, part of `npm run lint`); the tests also run them.

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Fails to compile unless `T` is `true` (use with `Equal`). */
function expectType<T extends true>(..._proof: T[]): void {}

type MyMeta = { model: string; totalTokens?: number };
type MyData = { status: { phase: "searching" | "done" } };
type MyTools = { weather: { input: { city: string }; output: { tempC: number } } };
type MyUIMessage = UIMessage<MyMeta, MyData, MyTools>;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A model that streams "Sunny." once. */
function sunnyModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "Sunny." },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
        ],
      }),
    }),
  });
}

const question: MyUIMessage = {
  id: "u1",
  role: "user",
  metadata: { model: "none" },
  parts: [{ type: "text", text: "Weather in Oslo?" }],
};
const toolAnswer: MyUIMessage = {
  id: "a1",
  role: "assistant",
  metadata: { model: "gpt", totalTokens: 12 },
  parts: [
    { type: "data-status", data: { phase: "done" } },
    {
      type: "tool-weather",
      toolCallId: "c1",
      state: "output-available",
      input: { city: "Oslo" },
      output: { tempC: 4 },
    },
    { type: "text", text: "4 °C." },
  ],
};

test("a Session<MyUIMessage> reads and writes the app's UIMessage type, with no cast", async () => {
  const session = Session.create<MyUIMessage>(new MemoryStore()).forSession("typed");
  const appended = await session.appendMessage(question);
  expectType<Equal<typeof appended.message, MyUIMessage>>();
  await session.appendMessage(toolAnswer);

  const ui: UIMessage<MyMeta, MyData, MyTools>[] = await session.getHistory();
  const one: MyUIMessage | null = await session.getMessage("a1");
  const leaf: MyUIMessage | null = await session.getLatestLeaf();
  const branches: MyUIMessage[] = await session.getBranches("u1");
  const recent: MyUIMessage[] = (await session.getRecentHistory(1_000_000)).messages;
  const hits = await session.search("Oslo");
  expectType<Equal<(typeof hits)[number]["role"], MyUIMessage["role"]>>();
  expectType<Equal<Awaited<ReturnType<typeof session.getHistory>>, MyUIMessage[]>>();

  // The typed parts narrow as the app declared them.
  const tool = one?.parts.find((p) => p.type === "tool-weather");
  if (tool?.type === "tool-weather" && tool.state === "output-available") {
    expectType<Equal<typeof tool.output, { tempC: number }>>();
    assert.equal(tool.output.tempC, 4);
  } else assert.fail("tool part missing");
  const meta: MyMeta | undefined = leaf?.metadata;
  assert.equal(meta?.totalTokens, 12);
  assert.deepEqual(ui, [question, toolAnswer]);
  assert.deepEqual(branches, [toolAnswer]);
  assert.deepEqual(recent, ui);
  assert.equal(hits[0]?.id, "u1");

  // convertToModelMessages takes the history as it is, and it is a plain UIMessage[] too.
  const history = await session.getHistory();
  const model = await convertToModelMessages(history);
  assert.equal(model[0]?.role, "user");
  const plain: UIMessage[] = history;
  assert.equal(plain.length, 2);

  // Writes take the app's type: a data part the app did not declare does not compile.
  await session.appendMessage({
    id: "bad",
    role: "assistant",
    // @ts-expect-error MyData has no "data-unknown" part
    parts: [{ type: "data-unknown", data: 1 }],
  });
  await session.close();
});

test("a streamText route with originalMessages: history and persistChatTurn compiles and stores with no cast", async () => {
  const store = new MemoryStore();
  const session = Session.create<MyUIMessage>(store).forSession("route");
  await session.appendMessage(question);

  // The AI SDK's own persistence pattern: history in, the finished answer appended in onFinish.
  const history = await session.getHistory();
  const response = streamText({
    model: sunnyModel(),
    messages: await convertToModelMessages(history),
  }).toUIMessageStreamResponse({
    originalMessages: history,
    generateMessageId: generateId,
    onFinish: async ({ responseMessage }) => {
      expectType<Equal<typeof responseMessage, MyUIMessage>>();
      await session.appendMessage(responseMessage);
    },
  });
  await response.text();
  assert.deepEqual(textsOf(await session.getHistory()), ["Weather in Oslo?", "Sunny."]);

  // The same with persistChatTurn: the turn is typed by the session.
  const body: ChatRequestBody<MyUIMessage> = {
    id: "route",
    trigger: "submit-message",
    messages: [...(await session.getHistory()), { ...question, id: "u2" }],
  };
  const turn = await persistChatTurn(session, body);
  expectType<Equal<typeof turn.messages, MyUIMessage[]>>();
  // An `any` body (a framework's `await c.req.json()`): the turn is typed by the session.
  const fromAny = () => persistChatTurn(session, JSON.parse("{}"));
  expectType<Equal<Awaited<ReturnType<typeof fromAny>>["messages"], MyUIMessage[]>>();
  const turnResponse = streamText({
    model: sunnyModel(),
    messages: await convertToModelMessages(turn.messages),
  }).toUIMessageStreamResponse({ originalMessages: turn.messages, onFinish: turn.onFinish.bind(turn) });
  await turnResponse.text();
  const loaded = await loadChat(session);
  expectType<Equal<typeof loaded, MyUIMessage[]>>();
  assert.deepEqual(textsOf(loaded), ["Weather in Oslo?", "Sunny.", "Weather in Oslo?", "Sunny."]);
  await session.close();
});

test("a Session<UIMessage> (no app types) reads the AI SDK's UIMessage as is", async () => {
  const session = Session.create<UIMessage>(new MemoryStore()).forSession("plain");
  await session.appendMessage({ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] });
  const history = await session.getHistory();
  const ui: UIMessage[] = history;
  expectType<Equal<typeof history, UIMessage[]>>();
  assert.equal((await convertToModelMessages(history))[0]?.role, "user");
  const response = streamText({ model: sunnyModel(), messages: await convertToModelMessages(ui) });
  await response
    .toUIMessageStreamResponse({
      originalMessages: history,
      generateMessageId: generateId,
      onFinish: async ({ responseMessage }) => {
        await session.appendMessage(responseMessage);
      },
    })
    .text();
  assert.deepEqual(textsOf(await session.getHistory()), ["hi", "Sunny."]);
  await session.close();
});

test("a SessionManager<MyUIMessage> hands out typed sessions", async () => {
  const manager = SessionManager.create<MyUIMessage>(new MemoryStore());
  const { id } = await manager.create("typed");
  await manager.append(id, question);
  await manager.appendAll(id, [toolAnswer]);
  const viaManager: MyUIMessage[] = await manager.getHistory(id);
  const session: Session<MyUIMessage> = manager.getSession(id);
  const viaSession: UIMessage<MyMeta, MyData, MyTools>[] = await session.getHistory();
  const branches: MyUIMessage[] = await manager.getBranches(id, "u1");
  // A typed session is still a Session wherever an untyped one is taken (helpers, the OpenAI Agents adapter).
  const untyped: Session = session;
  assert.equal(untyped.sessionId, id);
  assert.deepEqual(viaManager, viaSession);
  assert.deepEqual(branches, [toolAnswer]);
  await manager.close();
});

test("a typed store or provider of the app's own types the Session it is given to", () => {
  const fromStore = (store: SessionStore<MyUIMessage>) => Session.create(store);
  const fromProvider = (provider: SessionProvider<MyUIMessage>) => Session.create(provider);
  expectType<Equal<ReturnType<typeof fromStore>, Session<MyUIMessage>>>();
  expectType<Equal<ReturnType<typeof fromProvider>, Session<MyUIMessage>>>();
  // A path, handle or built-in store gives the default.
  const untyped = Session.create(new MemoryStore());
  expectType<Equal<typeof untyped, Session>>();
  const onPath = (path: string) => Session.create(path);
  expectType<Equal<ReturnType<typeof onPath>, Session>>();
});

test("untyped sessions keep SessionMessage; loadChat gives them UIMessages", async () => {
  const session = Session.create(new MemoryStore());
  await session.appendMessage(question);
  const history = await session.getHistory();
  expectType<Equal<typeof history, SessionMessage[]>>();
  // The default is not a UIMessage (any role and part type is stored); loadChat is the typed view for it.
  // @ts-expect-error a SessionMessage's parts are open, a UIMessage's are a closed union
  const notUi: UIMessage[] = history;
  assert.equal(notUi.length, 1);
  const ui: UIMessage[] = await loadChat(session);
  const typed = await loadChat<MyUIMessage>(session);
  expectType<Equal<typeof typed, MyUIMessage[]>>();
  assert.deepEqual(ui, typed);
  // Any role is stored; the AI SDK's three are suggested.
  const tool: SessionMessage = { id: "t1", role: "tool", parts: [] };
  await session.appendMessage(tool);
  await session.close();
});

test("the providers are named to pair with StoreProvider; their former names are the same classes", async () => {
  const memory = new MemoryStore();
  const sqlite = new SqliteStore(":memory:");
  try {
    assert.equal(MemorySessionProvider, MemoryStoreProvider);
    assert.equal(SqliteSessionProvider, SqliteStoreProvider);
    assert.ok(memory.session("s") instanceof MemoryStoreProvider);
    assert.ok(sqlite.session("s") instanceof SqliteStoreProvider);
    expectType<Equal<MemorySessionProvider, MemoryStoreProvider>>();
    expectType<Equal<SqliteSessionProvider, SqliteStoreProvider>>();
  } finally {
    await memory.close();
    await sqlite.close();
  }
});

function textsOf(
  messages: ReadonlyArray<{ parts: ReadonlyArray<{ type: string; text?: string }> }>,
): string[] {
  return messages.map((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text ?? ""] : [])).join(""));
}
