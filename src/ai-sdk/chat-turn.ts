import type { StepResult, ToolSet, UIMessage } from "ai";
import { z } from "zod";
import { SessionError } from "../errors.js";
import { isCompactionMessage } from "../message/overlay.js";
import { parseInput } from "../schema/parse.js";
import { rule } from "../schema/to-session-error.js";
import { appendAnswer, appendSent } from "./chat-conflict.js";
import {
  type ChatPlan,
  type ChatRequest,
  type ChatTrigger,
  type PersistChatOptions,
  planTurn,
} from "./chat-request.js";
import { type ChatLearning, storageLearning } from "./learn.js";
import { loadChat } from "./messages.js";
import { type AnswerNotKept, notKept, warnNotKept, withNotKept } from "./not-kept.js";
import { contextReminder, withReminder } from "./reminder.js";
import { ResumableStreams } from "./resumable.js";
import { fromSteps } from "./steps.js";
import { type ChatStorage, chatMessageId, putMessage } from "./storage.js";
import { closeCalls, isClientCall, lacksResult } from "./tool-calls.js";

export type { ChatRequest, ChatTrigger, PersistChatOptions };

/** The JSON body `useChat` posts by default (for typing `await req.json()`). */
export interface ChatRequestBody<M extends UIMessage = UIMessage> {
  id: string;
  messages: M[];
  trigger: ChatTrigger;
  messageId?: string | undefined;
}

/** The `onFinish` event of `toUIMessageStreamResponse` (the fields the turn reads). */
export interface ChatFinishEvent<M extends UIMessage> {
  responseMessage: M;
  isContinuation?: boolean;
  /** The stream was stopped (the request's abort): the answer waits on nothing, its open calls are closed. */
  isAborted?: boolean;
  /** How the stream ended; `failed` is treated as stopped. */
  outcome?: { status: string };
}

/**
 * One chat turn whose request is already stored; spread `streamOptions` into `toUIMessageStreamResponse` (or call
 * `saveResult` with a `generateText` result) to store the answer.
 */
export class ChatTurn<M extends UIMessage> {
  /** Spread into `toUIMessageStreamResponse(...)`: the answer gets an id the page keeps and is stored on finish. */
  readonly streamOptions: {
    originalMessages: M[];
    generateMessageId: () => string;
    onFinish: (event: ChatFinishEvent<M>) => Promise<void>;
    /** With `resumable`: keeps the SSE events in the store while the answer streams (a tee of the response). */
    consumeSseStream?: (options: { stream: ReadableStream<string> }) => void;
  };

  /**
   * What the model is given (`convertToModelMessages(turn.messages)`): the stored path the answer follows, its user
   * text neutralised (see `withReminder`); with a `reminder`, its latest user message ends with it (a copy:
   * `streamOptions.originalMessages` and the store never hold either).
   */
  readonly messages: M[];

  /** The refusal of a late answer (set by storeResponse), and whether `response()` tells the page about it. */
  private late: { error: unknown; answer: AnswerNotKept } | undefined;
  private tellsPage = false;

  constructor(
    private readonly storage: ChatStorage,
    /** The stored path the answer follows, as the page shows it. */
    messages: M[],
    /** The stored id the answer goes under (a continued answer: its own id; null: the answer starts a root). */
    readonly parentId: string | null,
    /** The session's context reminder for this call (`Session.reminder()`), or null. */
    readonly reminder: string | null = null,
    /** The app's tools (`PersistChatOptions.tools`): a server tool's call is never stored waiting. */
    private readonly tools?: ToolSet | undefined,
    /** Where the answer's chunks are kept while it streams (`PersistChatOptions.resumable`), and for which session. */
    readonly resumable?: Resumable | undefined,
    /**
     * The answer of a send: stored only while `parentId` is still the session's latest leaf, so a message another
     * request of the chat stored meanwhile is not hidden behind it (chat-conflict.ts).
     */
    readonly atTip: boolean = false,
    /** The chat's learning (`PersistChatOptions.learn`): asked for once the answer is stored. */
    private readonly learning?: ChatLearning | undefined,
  ) {
    this.messages = withReminder(messages, reminder);
    // The stream continues the last of originalMessages when it is an assistant message; a summary the path
    // ends on is no answer to continue, so the new answer gets an id of its own and goes under parentId.
    const last = messages[messages.length - 1];
    this.streamOptions = {
      originalMessages: last !== undefined && isCompactionMessage(last) ? messages.slice(0, -1) : messages,
      generateMessageId: chatMessageId,
      onFinish: (event) => this.onFinish(event),
      ...(resumable === undefined
        ? {}
        : {
            // Not awaited by the AI SDK: keep() reports its own failures (ResumableStreamsOptions.onError).
            consumeSseStream: ({ stream }: { stream: ReadableStream<string> }) => {
              void resumable.streams.keep(resumable.sessionId, stream);
            },
          }),
    };
  }

  /**
   * Stores the streamed answer: a new child of the request, or an in-place replacement for a continuation. A
   * stopped answer (aborted, or failed) is stored with what it streamed, and its tool calls without a result are
   * closed with an error result: nothing in it waits on the page (a server tool cut off while it ran is not the
   * page's to answer).
   */
  async onFinish(event: ChatFinishEvent<M>): Promise<void> {
    const stopped = event.isAborted === true || event.outcome?.status === "failed";
    const message = event.responseMessage;
    try {
      await this.saveResponse(
        stopped ? { ...message, parts: closeCalls(message.parts, lacksResult) } : message,
      );
    } catch (error) {
      // A late answer (not-kept.ts) ends its stream normally: the page is told by response(), else a warning.
      const late = this.late;
      if (late === undefined || late.error !== error) throw error;
      if (!this.tellsPage) warnNotKept(late.answer);
    }
  }

  /**
   * The streamed answer's response: `result.toUIMessageStreamResponse({ ...options, ...turn.streamOptions })`, whose
   * stream ends with a `data-answer-not-kept` part (`NOT_KEPT_PART`) when the answer was not stored because another
   * request of the chat stored a message after its question meanwhile (docs/AI-SDK.md).
   */
  response<O>(
    result: { toUIMessageStreamResponse(options?: O): Response },
    options?: Omit<O, keyof ChatTurn<M>["streamOptions"]>,
  ): Response {
    this.tellsPage = true;
    const response = result.toUIMessageStreamResponse({ ...options, ...this.streamOptions } as O);
    if (response.body === null) return response;
    const { status, statusText, headers } = response;
    return new Response(
      withNotKept(response.body, () => this.late?.answer),
      { status, statusText, headers },
    );
  }

  /**
   * Stores an answer: a message whose id is already stored (a continuation of an assistant message after
   * client-side tool results) is replaced in place; a new one becomes a child of `parentId`. An answer without
   * parts (aborted before any output) is not stored. With `tools`, a server tool's call without a result is
   * stored closed with an error result.
   */
  async saveResponse(message: M): Promise<void> {
    await this.storeResponse(message);
    // The turn is stored (an empty answer stores nothing, but the request's messages are there to learn).
    this.learning?.kick();
  }

  /**
   * Resolves once the facts of the chat's turns so far are learned (with `learn`; at once without it). A platform
   * that stops a request's work when its response ends (serverless) keeps it alive with this (`waitUntil`).
   */
  async learned(): Promise<void> {
    await this.learning?.idle();
  }

  private async storeResponse(message: M): Promise<void> {
    if (message.parts.length === 0) return;
    const tools = this.tools;
    const parts =
      tools === undefined
        ? message.parts
        : closeCalls(message.parts, (part) => lacksResult(part) && !isClientCall(part, tools));
    const answer = { ...message, parts, ...(message.id === "" ? { id: chatMessageId() } : {}) };
    if (this.atTip) {
      try {
        if (await appendAnswer(this.storage, answer, this.parentId)) return;
      } catch (error) {
        const late = notKept(error, this.parentId);
        if (late) this.late = { error, answer: late };
        throw error;
      }
    }
    await putMessage(this.storage, answer, this.parentId);
  }

  /** Stores what `generateText` returned as one assistant `UIMessage` (steps, text, reasoning, tool calls). */
  async saveResult<T extends ToolSet>(result: { steps: ReadonlyArray<StepResult<T>> }): Promise<M> {
    const message = { id: chatMessageId(), role: "assistant", parts: fromSteps(result.steps) } as M;
    await this.saveResponse(message);
    return message;
  }
}

/**
 * Stores what a chat request may add to the session's tree and returns the turn that stores the answer. The
 * stored tree is the truth: the page may add a user message (a send, or an edit stored as a sibling), ask for
 * an answer under a stored message (a regenerate), or give the newest answer of its branch results for the tool
 * calls that wait on the page; anything else it posts is ignored or refused with a `SessionError` (see
 * docs/AI-SDK.md). `options.tools` (what `streamText` gets) tells the page's calls from the server's, and
 * `options.maxRequestBytes` bounds what one request stores. `turn.messages` is the stored path the answer
 * follows, never the posted array.
 */
export async function persistChatTurn<M extends UIMessage>(
  storage: ChatStorage<M> | ChatStorage,
  request: ChatRequest<M>,
  options: PersistChatOptions = {},
): Promise<ChatTurn<M>> {
  const resumable = resumableOf(storage, options);
  // Checked before anything is stored: bad options are INVALID_ARGUMENT, a store without facts UNSUPPORTED.
  const learning =
    options.learn === undefined ? undefined : storageLearning(storage, options.learn, "persistChatTurn");
  const turn = await storeChatRequest<M>(storage, request, options);
  // Context reminders (./reminder.ts): read once the request is stored, sent with this call only, never stored.
  const reminder = await contextReminder(storage);
  if (reminder === null && resumable === undefined && learning === undefined) return turn;
  return new ChatTurn(
    storage,
    turn.messages,
    turn.parentId,
    reminder,
    options.tools,
    resumable,
    turn.atTip,
    learning,
  );
}

/** Where a resumable turn keeps its chunks: the session the storage names (a `Session` or a store's provider). */
interface Resumable {
  streams: ResumableStreams;
  sessionId: string;
}

const resumableSchema = z.instanceof(
  ResumableStreams,
  rule("resumable must be what resumableStreams() returns", "type"),
);

// The option's type is a schema; its clash with a storage that names no session stays a check of the two.
function resumableOf(storage: ChatStorage, options: PersistChatOptions): Resumable | undefined {
  const streams = options.resumable;
  if (streams === undefined) return undefined;
  parseInput(resumableSchema, streams, { path: "resumable" });
  const sessionId = (storage as { sessionId?: unknown }).sessionId;
  if (typeof sessionId !== "string") {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "resumable needs a storage that names its session (a Session or a store's provider: sessionId)",
      { issues: [{ path: "resumable", rule: "conflict" }] },
    );
  }
  return { streams, sessionId };
}

/** Stores what the request may add (see persistChatTurn) and returns its turn (without a reminder). */
async function storeChatRequest<M extends UIMessage>(
  storage: ChatStorage<M> | ChatStorage,
  request: ChatRequest<M>,
  options: PersistChatOptions,
): Promise<ChatTurn<M>> {
  const plan = await planTurn(storage, request, options);
  if (plan.kind === "continue") return continueAnswer<M>(storage, plan, options.tools);
  const leaf =
    plan.kind === "answer" ? plan.under : await appendSent(storage, plan.parentId, plan.messages, plan.leaf);
  const atTip = plan.kind === "send" && plan.leaf !== undefined;
  return new ChatTurn(storage, await loadChat<M>(storage, leaf), leaf, null, options.tools, undefined, atTip);
}

/** Gives the stored answer the page's tool results and continues it (the stream extends the same message). */
async function continueAnswer<M extends UIMessage>(
  storage: ChatStorage,
  plan: ChatPlan & { kind: "continue" },
  tools: ToolSet | undefined,
): Promise<ChatTurn<M>> {
  const { answer, parts } = plan;
  const messages = await loadChat<M>(storage, answer.id);
  if (messages[messages.length - 1]?.id !== answer.id) {
    throw new SessionError(
      "CONFLICT",
      `Answer "${answer.id}" is covered by a summary, so it cannot be continued: reload the conversation (loadChat)`,
    );
  }
  if (parts) {
    // Only the parts change: a server write of the stored message keeps the metadata the server gave it.
    const continued = { ...answer, parts };
    await storage.updateMessage(continued);
    messages[messages.length - 1] = continued as unknown as M;
  }
  return new ChatTurn(storage, messages, answer.id, null, tools);
}
