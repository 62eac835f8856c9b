import type { StepResult, ToolSet, UIMessage } from "ai";
import { SessionError } from "../errors.js";
import { COMPACTION_PREFIX, describe, isCompactionMessage } from "../message.js";
import type { SessionMessage } from "../types.js";
import { loadChat } from "./messages.js";
import { contextReminder, withReminder } from "./reminder.js";
import { fromSteps } from "./steps.js";
import {
  type ChatStorage,
  chatMessageId,
  editedId,
  legacyEditedId,
  putMessage,
  sameParts,
} from "./storage.js";

/** The `trigger` values `useChat` posts (`resume-stream` is a GET to a different route). */
export type ChatTrigger = "submit-message" | "regenerate-message";

/** What a chat route receives: `useChat`'s body (`messages`), or only the newest message (`message`). */
export interface ChatRequest<M extends UIMessage> {
  /** The page's whole conversation, as `useChat` posts it by default. */
  messages?: M[] | undefined;
  /** Only the new message (the AI SDK's "send only the last message" pattern, or a server-side turn). */
  message?: M | undefined;
  trigger?: ChatTrigger | undefined;
  messageId?: string | undefined;
  /** With `message`: where it goes (default: after the latest leaf). */
  parentId?: string | null | undefined;
}

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
  };

  /**
   * The conversation to send to the model (`convertToModelMessages(turn.messages)`); with a `reminder`, its latest
   * user message ends with it (a copy: `streamOptions.originalMessages` and the store never hold it).
   */
  readonly messages: M[];

  constructor(
    private readonly storage: ChatStorage,
    /** The conversation as stored and shown on the page. */
    messages: M[],
    /** The stored id the answer goes under (null: the answer would start a new root). */
    readonly parentId: string | null,
    /** The session's context reminder for this call (`Session.reminder()`), or null. */
    readonly reminder: string | null = null,
  ) {
    this.messages = withReminder(messages, reminder);
    this.streamOptions = {
      originalMessages: messages,
      generateMessageId: chatMessageId,
      onFinish: (event) => this.onFinish(event),
    };
  }

  /** Stores the streamed answer: a new child of the request, or an in-place replacement for a continuation. */
  async onFinish(event: ChatFinishEvent<M>): Promise<void> {
    await this.saveResponse(event.responseMessage);
  }

  /**
   * Stores an answer: a message whose id is already stored (a continuation of an assistant message after
   * client-side tool results) is replaced in place; a new one becomes a child of `parentId`. An answer without
   * parts (aborted before any output) is not stored.
   */
  async saveResponse(message: M): Promise<void> {
    if (message.parts.length === 0) return;
    const answer = message.id === "" ? { ...message, id: chatMessageId() } : message;
    await putMessage(this.storage, answer, this.parentId, "server");
  }

  /** Stores what `generateText` returned as one assistant `UIMessage` (steps, text, reasoning, tool calls). */
  async saveResult<T extends ToolSet>(result: { steps: ReadonlyArray<StepResult<T>> }): Promise<M> {
    const message = { id: chatMessageId(), role: "assistant", parts: fromSteps(result.steps) } as M;
    await this.saveResponse(message);
    return message;
  }
}

/**
 * Stores a chat request in the session's tree and returns the turn that stores the answer. The tree follows the
 * messages, whatever the `trigger`: new messages at the end are appended after the last stored one; a user
 * message whose id is stored with other content is an edit, stored as a sibling of the original; an assistant
 * message at the end is a continuation (client-side tool results), replaced in place; and the answer goes under
 * the last message, so a regenerate (the page drops the old answer) becomes its sibling.
 */
export async function persistChatTurn<M extends UIMessage>(
  storage: ChatStorage<M> | ChatStorage,
  request: ChatRequest<M>,
): Promise<ChatTurn<M>> {
  const turn = await storeChatRequest(storage, request);
  // Context reminders (./reminder.ts): read once the request is stored, sent with this call only, never stored.
  const reminder = await contextReminder(storage);
  if (reminder === null) return turn;
  return new ChatTurn(storage, turn.streamOptions.originalMessages, turn.parentId, reminder);
}

/** Stores the request as `persistChatTurn` describes and returns its turn (without a reminder). */
async function storeChatRequest<M extends UIMessage>(
  storage: ChatStorage<M> | ChatStorage,
  request: ChatRequest<M>,
): Promise<ChatTurn<M>> {
  assertRequest(request);
  if (request.message !== undefined) return persistOne(storage, request.message, request.parentId);
  const messages = request.messages ?? [];
  // Walk back to the newest message already stored; everything after it is new. Usually one read.
  const spots: Array<{ id: string; stored: boolean }> = [];
  let known = messages.length - 1;
  for (; known >= 0; known--) {
    spots[known] = await locate(storage, messages[known]!);
    if (spots[known]!.stored) break;
  }
  let parentId = known >= 0 ? spots[known]!.id : null;
  const last = messages[messages.length - 1]!;
  if (known === messages.length - 1 && last.role === "assistant") {
    // A continuation: the page added tool results to the stored answer; the stream extends the same message. A
    // summary at the end (a regenerate of the answer it ends on) is no answer to extend: the new one goes under it.
    if (!isCompactionMessage(last)) await putMessage(storage, last, null, "client");
    return new ChatTurn(storage, messages, parentId);
  }
  for (let i = known + 1; i < messages.length; i++) {
    const { id } = spots[i]!;
    await putMessage(storage, { ...messages[i]!, id }, parentId, "client");
    parentId = id;
  }
  return new ChatTurn(storage, messages, parentId);
}

/**
 * Where a request message is (or will be) stored: its own id, or the id of its edit. A summary the page shows
 * (`loadChat` returns a compaction overlay in place of the range it covers) stands for the last message of that
 * range, so what follows it goes there.
 */
async function locate(
  storage: ChatStorage,
  message: SessionMessage,
): Promise<{ id: string; stored: boolean }> {
  if (isCompactionMessage(message)) return { id: await overlayEnd(storage, message.id), stored: true };
  const stored = await storage.getMessage(message.id);
  if (stored === null) return { id: message.id, stored: false };
  if (message.role !== "user" || sameParts(stored, message)) return { id: message.id, stored: true };
  const id = editedId(message);
  if ((await storage.getMessage(id)) !== null) return { id, stored: true };
  // An edit stored by an earlier version under its 32-bit id, if that row really holds this edit.
  const legacy = legacyEditedId(message);
  const old = await storage.getMessage(legacy);
  return old !== null && sameParts(old, message) ? { id: legacy, stored: true } : { id, stored: false };
}

/** The last message an overlay shown on the page covers (its `toMessageId`). */
async function overlayEnd(storage: ChatStorage, overlayId: string): Promise<string> {
  if (!storage.getCompactions) {
    throw new SessionError(
      "UNSUPPORTED",
      `The page shows the summary "${overlayId}", and this storage cannot tell what it covers (no getCompactions): ` +
        "pass a Session",
    );
  }
  const id = overlayId.slice(COMPACTION_PREFIX.length);
  const overlay = (await storage.getCompactions()).find((c) => c.id === id);
  if (!overlay) {
    throw new SessionError(
      "CONFLICT",
      `The page shows the summary "${overlayId}", which is no longer stored: reload the conversation (loadChat)`,
    );
  }
  return overlay.toMessageId;
}

async function persistOne<M extends UIMessage>(
  storage: ChatStorage,
  message: M,
  parentId: string | null | undefined,
): Promise<ChatTurn<M>> {
  const stored = await storage.getMessage(message.id);
  if (stored === null) await storage.appendMessage(message, parentId, { source: "client" });
  else if (message.role === "user" && !sameParts(stored, message)) {
    throw new SessionError(
      "UNSUPPORTED",
      `Message "${message.id}" is stored with other content: send the whole conversation (messages) to store an edit`,
    );
  } else if (message.role === "assistant") {
    await putMessage(storage, message, null, "client");
  }
  return new ChatTurn(storage, await loadChat<M>(storage, message.id), message.id);
}

function assertRequest(request: ChatRequest<UIMessage>): void {
  if (typeof request !== "object" || request === null) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "persistChatTurn needs the request body ({ messages, trigger })",
    );
  }
  const { messages, message, trigger } = request;
  if ((messages === undefined) === (message === undefined)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "persistChatTurn needs either messages (an array) or one message",
    );
  }
  if (messages !== undefined && (!Array.isArray(messages) || messages.length === 0)) {
    throw new SessionError("INVALID_ARGUMENT", "persistChatTurn needs a non-empty messages array");
  }
  // Every entry is looked at (its id read, its parts compared) before anything is stored.
  for (const entry of messages ?? [message]) {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry) || typeof entry.id !== "string") {
      throw new SessionError(
        "INVALID_MESSAGE",
        `persistChatTurn needs messages with a string id, got ${describe(entry)}`,
      );
    }
  }
  if (trigger !== undefined && trigger !== "submit-message" && trigger !== "regenerate-message") {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Unknown trigger ${JSON.stringify(trigger)}: expected "submit-message" or "regenerate-message"`,
    );
  }
}
