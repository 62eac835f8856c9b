import type { ToolSet, UIMessage } from "ai";
import type { SessionMessage, SessionMessagePart } from "../contract/message.js";
import { SessionError } from "../errors.js";
import type { LearnOptions } from "../facts/types.js";
import { describe } from "../message/describe.js";
import { COMPACTION_PREFIX, isCompactionMessage } from "../message/overlay.js";
import { parseInput } from "../schema/parse.js";
import { alreadySent, assertUnanswered, leafBeforeSend } from "./chat-conflict.js";
import { acceptToolResults } from "./continuation.js";
import { EditedIds } from "./edited-ids.js";
import { checkRegenerated, regeneratedParent } from "./regenerate.js";
import { chatRequest, postedMessages } from "./request-schema.js";
import { RequestBytes } from "./request-size.js";
import type { ResumableStreams } from "./resumable.js";
import { type ChatStorage, sameParts } from "./storage.js";

/**
 * How many entries at the end of a posted `messages` array are read. The rest is never looked at: the stored
 * tree is the conversation, and the page's copy of it matters only where it meets the store.
 */
export const POSTED_TAIL = 16;

/** The `trigger` values `useChat` posts (`resume-stream` is a GET to a different route). */
export type ChatTrigger = "submit-message" | "regenerate-message";

/** What a chat route receives: `useChat`'s body (`messages`), or only the newest message (`message`). */
export interface ChatRequest<M extends UIMessage> {
  /** The page's conversation, as `useChat` posts it by default (only its last {@link POSTED_TAIL} entries are read). */
  messages?: M[] | undefined;
  /** Only the new message (the AI SDK's "send only the last message" pattern, or a server-side turn). */
  message?: M | undefined;
  trigger?: ChatTrigger | undefined;
  messageId?: string | undefined;
  /** With `message`: where it goes (default: after the latest leaf). */
  parentId?: string | null | undefined;
}

/** How `persistChatTurn` treats a request (both optional). */
export interface PersistChatOptions {
  /**
   * The tools given to `streamText`: a tool with `execute` runs on the server, so the page may not post a result
   * for its calls, and a call of it stored without a result is closed by the server. Without them, any call the
   * answer waits on takes the page's result.
   */
  tools?: ToolSet | undefined;
  /**
   * Most bytes (UTF-8 JSON) of the page's content one request may store, its new user messages and tool results
   * (`DEFAULT_MAX_REQUEST_BYTES`, 8 MiB, by default; a whole number >= 1024, or Infinity): more is `TOO_LARGE`.
   */
  maxRequestBytes?: number | undefined;
  /**
   * Keeps the streamed answer's chunks in the store while it runs, so a reloaded page rejoins it
   * (`useChat({ resume: true })`, answered by `resumable.response(id)`); the storage must be a `Session` or a
   * store's provider (it names the session).
   */
  resumable?: ResumableStreams | undefined;
  /**
   * Learn facts from the chat (`{ extractor, … }`, any `learnFacts` option; docs/FACTS.md, "Doors"): once the turn's
   * answer is stored, the session's messages not learned yet are learned in the background, never on the request's
   * path (`turn.learned()` waits for it). The storage must be a `Session` on a store with facts.
   */
  learn?: LearnOptions | undefined;
}

/** What a request asks for, read from the end of what the page posted. */
export type ChatPlan =
  /** Continue the stored answer `answer`; `parts` are its parts with the page's tool results (null: none). */
  | { kind: "continue"; answer: SessionMessage; parts: SessionMessagePart[] | null }
  /** Answer under the stored message `under` (a regenerate, or a retry of a stored request). */
  | { kind: "answer"; under: string }
  /**
   * Store the page's new user `messages` in order under `parentId` (undefined: the latest leaf), the first only
   * while the session's latest leaf is still `leaf` (undefined: the storage cannot tell; see chat-conflict.ts).
   */
  | {
      kind: "send";
      parentId: string | null | undefined;
      messages: SessionMessage[];
      leaf: string | null | undefined;
    };

/** Where a posted message is, or would be, stored. */
interface Spot {
  id: string;
  stored: SessionMessage | null;
  overlay: boolean;
}

/** Reads a request against the stored tree (nothing is written); refuses what the page may not ask. */
export async function planTurn(
  storage: ChatStorage,
  request: ChatRequest<UIMessage>,
  options: PersistChatOptions = {},
): Promise<ChatPlan> {
  const bytes = new RequestBytes(options.maxRequestBytes);
  parseRequest(request);
  const whole = request.messages !== undefined;
  const posted: SessionMessage[] = whole ? request.messages!.slice(-POSTED_TAIL) : [request.message!];
  const last = posted[posted.length - 1]!;
  // Where the last message sits in the request, for a refusal's issue.
  const lastPath = whole ? `messages.${request.messages!.length - 1}` : "message";
  const edits = new EditedIds(storage);
  const spot = await locate(storage, last, whole ? edits : null);
  const regenerate = request.trigger === "regenerate-message";
  if (regenerate && last.role === "assistant" && !spot.overlay) {
    return { kind: "answer", under: await regenerated(storage, last, spot, request.messageId) };
  }
  if (regenerate && (spot.overlay || spot.stored)) {
    await checkRegenerated(storage, request.messageId, spot.id, last.id);
  }
  if (spot.overlay) return { kind: "answer", under: spot.id };
  if (last.role === "assistant") return continuation(storage, last, lastPath, spot, options.tools, bytes);
  if (last.role !== "user") {
    throw new SessionError(
      "INVALID_MESSAGE",
      `The page may add user messages only; message "${last.id}" has role ${describe(last.role)}`,
      { issues: [{ path: `${lastPath}.role`, rule: "one_of" }] },
    );
  }
  if (spot.stored) {
    if (request.trigger === "submit-message") throw alreadySent(last);
    return { kind: "answer", under: spot.id };
  }
  // Read before the checks below: the first write expects it unchanged (chat-conflict.ts).
  const leaf = await leafBeforeSend(storage);
  const added = [measured(bytes, { ...last, id: spot.id })];
  if (!whole) return { kind: "send", parentId: request.parentId, messages: added, leaf };
  // Whether the first new message is an edit (stored under an id of its own): a fork the page asks for.
  let edit = spot.id !== last.id;
  // Back to the newest message the store has; the user messages after it are new (one, unless an earlier
  // request failed before storing its own), anything else after it is not the page's to add and is skipped.
  for (let i = posted.length - 2; i >= 0; i--) {
    const entry = posted[i]!;
    const at = await locate(storage, entry, edits);
    if (at.stored || at.overlay) {
      await assertUnanswered(storage, at.id, leaf, edit);
      return { kind: "send", parentId: at.id, messages: added, leaf };
    }
    if (entry.role === "user") {
      added.unshift(measured(bytes, { ...entry, id: at.id }));
      edit = at.id !== entry.id;
    }
  }
  if (request.messages!.length > posted.length) {
    throw new SessionError(
      "CONFLICT",
      `None of the last ${POSTED_TAIL} messages the page posted is stored: reload the conversation (loadChat)`,
    );
  }
  await assertUnanswered(storage, null, leaf, edit);
  return { kind: "send", parentId: null, messages: added, leaf };
}

/** A continuation: the page's tool results for the calls the newest stored answer of its branch waits on. */
async function continuation(
  storage: ChatStorage,
  posted: SessionMessage,
  path: string,
  spot: Spot,
  tools: ToolSet | undefined,
  bytes: RequestBytes,
): Promise<ChatPlan> {
  const answer = spot.stored;
  if (answer === null) {
    throw new SessionError(
      "CONFLICT",
      `The page continues answer "${posted.id}", which is not stored: reload the conversation (loadChat)`,
    );
  }
  if ((await storage.getBranches(answer.id)).length > 0) {
    throw new SessionError(
      "CONFLICT",
      `Answer "${answer.id}" already has replies, so it cannot be continued: reload the conversation (loadChat)`,
    );
  }
  if (!Array.isArray(posted.parts)) {
    throw new SessionError("INVALID_MESSAGE", `Message "${posted.id}" has no parts array`, {
      issues: [{ path: `${path}.parts`, rule: posted.parts === undefined ? "required" : "type" }],
    });
  }
  return { kind: "continue", answer, parts: acceptToolResults(answer.parts, posted.parts, tools, bytes) };
}

/** Where a regenerate of the stored answer the request ends on puts the new answer (see `regeneratedParent`). */
async function regenerated(
  storage: ChatStorage,
  posted: SessionMessage,
  spot: Spot,
  messageId: string | undefined,
): Promise<string> {
  if (spot.stored === null) {
    throw new SessionError(
      "CONFLICT",
      `The page regenerates answer "${posted.id}", which is not stored: reload the conversation (loadChat)`,
    );
  }
  const before = await regeneratedParent(storage, spot.stored, messageId);
  return isCompactionMessage(before) ? overlayEnd(storage, before.id) : before.id;
}

/** A new message the page adds, counted against what the request may store before anything is written. */
function measured(bytes: RequestBytes, message: SessionMessage): SessionMessage {
  bytes.add(`message "${message.id}"`, message);
  return message;
}

/**
 * Where a posted message is (or will be) stored: its own id, or the id of its edit (`edits`, edited-ids.ts: a user
 * message whose id is stored with other parts; without them that is `UNSUPPORTED`). A summary the page shows (`loadChat` returns
 * a compaction overlay in place of the range it covers) stands for the last message of that range. A stored
 * message posted under another role is `CONFLICT`: the page's copy is not the stored one.
 */
async function locate(storage: ChatStorage, message: SessionMessage, edits: EditedIds | null): Promise<Spot> {
  if (isCompactionMessage(message)) {
    return { id: await overlayEnd(storage, message.id), stored: null, overlay: true };
  }
  const stored = await storage.getMessage(message.id);
  if (stored === null) return { id: message.id, stored, overlay: false };
  if (stored.role !== message.role) {
    throw new SessionError(
      "CONFLICT",
      `Message "${message.id}" is stored as a ${describe(stored.role)} message, and the page posted it as ` +
        `${describe(message.role)}: reload the conversation (loadChat)`,
    );
  }
  if (message.role !== "user" || sameParts(stored, message))
    return { id: message.id, stored, overlay: false };
  if (edits === null) {
    throw new SessionError(
      "UNSUPPORTED",
      `Message "${message.id}" is stored with other content: send the whole conversation (messages) to store an edit`,
    );
  }
  return { ...(await edits.locate(message)), overlay: false };
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

function parseRequest(request: ChatRequest<UIMessage>): void {
  const { messages, message } = parseInput(chatRequest, request);
  // Every entry that is read is checked before anything is stored; the rest of the array is never looked at.
  parseInput(postedMessages, messages?.slice(-POSTED_TAIL) ?? [message], { code: "INVALID_MESSAGE" });
}
