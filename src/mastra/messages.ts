/**
 * A Mastra message (`MastraDBMessage`) as a session message and back (docs/MASTRA.md, "What maps to what"): the id,
 * role and time are the session message's own, the content's parts its parts (so its text is what search and facts
 * read), and the rest of the content and the message's `type` under `metadata.mastra` (the word "text" for a message
 * that is its text and nothing else). Nothing is stored twice.
 */
import type { MastraDBMessage } from "@mastra/core/memory";
import type { SessionMessage, SessionMessagePart } from "../contract/message.js";

type Loose = Record<string, unknown>;

/** What a session message keeps of a Mastra message besides its parts. */
interface MastraExtra {
  type?: string;
  resourceId?: string;
  content: Loose;
}

const isObject = (value: unknown): value is Loose =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The session message of a Mastra message (its parts are the content's; a string content becomes a text part). */
export function sessionMessageOf(message: MastraDBMessage): SessionMessage {
  const content = (
    isObject(message.content) ? message.content : { format: 2, content: message.content }
  ) as Loose;
  const { parts, ...rest } = content;
  let kept: SessionMessagePart[] = Array.isArray(parts)
    ? (parts.filter(isObject) as unknown as SessionMessagePart[])
    : [];
  if (kept.length === 0 && typeof rest.content === "string" && rest.content.length > 0) {
    // A message saved with text only: the text is its part (and not kept twice).
    kept = [{ type: "text", text: rest.content }];
    rest.content = undefined;
    rest.textOnly = true;
  }
  // Mastra repeats a one-text message's text as `content.content`: kept once, as the part (restored on reads).
  const only = kept.length === 1 ? (kept[0] as { type?: unknown; text?: unknown }) : undefined;
  if (only?.type === "text" && typeof rest.content === "string" && rest.content === only.text) {
    rest.content = undefined;
    rest.textOnly = true;
  }
  // Format 2 is what a read answers when none is kept: not stored for every message.
  if (rest.format === 2) rest.format = undefined;
  const extra: MastraExtra = { content: rest };
  if (typeof message.type === "string" && message.type !== "v2") extra.type = message.type;
  // A message's resource is its thread's owner (a save refuses any other, save.ts), which a read answers: not stored.
  return {
    id: message.id,
    role: message.role,
    parts: kept,
    createdAt: createdAtOf(message.createdAt),
    metadata: { mastra: isPlainText(extra) ? PLAIN_TEXT : extra },
  };
}

// What `metadata.mastra` holds for the most common message, a v2 message whose content is its text (a part, repeated
// as `content.content`) and nothing else: one word instead of `{"content":{"textOnly":true}}` (23 bytes less a row).
const PLAIN_TEXT = "text";

const isPlainText = (extra: MastraExtra) =>
  extra.type === undefined &&
  Object.entries(extra.content).every(
    ([key, value]) => value === undefined || (key === "textOnly" && value === true),
  ) &&
  extra.content.textOnly === true;

/** The time a message is stored with: its own (a Date or an ISO string), else now. */
export function createdAtOf(value: unknown): Date {
  const at = value instanceof Date ? value : typeof value === "string" ? new Date(value) : new Date();
  return Number.isNaN(at.getTime()) ? new Date() : at;
}

/** The Mastra message of a stored session message of `threadId`, whose owner is `owner`. */
export function mastraMessageOf(
  message: SessionMessage,
  threadId: string,
  owner: string | undefined,
): MastraDBMessage {
  const stored = isObject(message.metadata) ? message.metadata.mastra : undefined;
  const extra = (
    stored === PLAIN_TEXT ? { content: { textOnly: true } } : isObject(stored) ? stored : {}
  ) as Partial<MastraExtra>;
  const { textOnly, ...rest } = isObject(extra.content) ? extra.content : ({} as Loose);
  const parts = message.parts as unknown[];
  const content: Loose = { format: 2, ...rest, parts };
  if (textOnly === true) {
    const first = parts[0] as Loose | undefined;
    content.content = typeof first?.text === "string" ? first.text : "";
  }
  const out: Loose = {
    id: message.id,
    role: message.role,
    createdAt: createdAtOf(message.createdAt),
    threadId,
    resourceId: extra.resourceId ?? owner,
    content,
  };
  if (typeof extra.type === "string") out.type = extra.type;
  return out as unknown as MastraDBMessage;
}

/** `base` with `patch` merged in, objects key by key at every depth (arrays and other values replaced). */
export function deepMerge(base: unknown, patch: unknown): unknown {
  if (!isObject(base) || !isObject(patch)) return patch;
  const out: Loose = { ...base };
  for (const [key, value] of Object.entries(patch))
    out[key] = value === undefined ? out[key] : deepMerge(out[key], value);
  return out;
}
