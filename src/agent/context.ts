import type { ModelMessage } from "ai";
import { answersOf, callsOf, missingResults, type PendingCall } from "./repair.js";
import { type SendableOptions, sendable } from "./sendable.js";
import type { AgentMessage } from "./types.js";

/** What the next model call sees of a session: the messages after the latest compaction, and its summary. */
export interface ModelContext {
  messages: ModelMessage[];
  /** The latest compaction summary, which joins the system prompt. */
  summary?: string;
}

/** True for a compaction marker (a stored summary, never sent as a message). */
export function isCompactionMarker(message: AgentMessage): boolean {
  return message.metadata?.synthetic === "compaction";
}

/** Index of the latest compaction marker, or -1. */
export function latestCompaction(messages: readonly AgentMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isCompactionMarker(messages[i]!)) return i;
  return -1;
}

/** The stored messages the next call covers: the kept tail before the latest marker, then everything after it. */
export function activeMessages(messages: readonly AgentMessage[]): {
  active: AgentMessage[];
  summary?: string;
} {
  const marker = latestCompaction(messages);
  if (marker < 0) return { active: [...messages] };
  const markerMessage = messages[marker]!;
  const keepFromId = markerMessage.metadata?.compaction?.keepFromId ?? null;
  let start = marker;
  if (keepFromId !== null) {
    const found = messages.findIndex((message, index) => index < marker && message.id === keepFromId);
    if (found >= 0) start = found;
  }
  const active = messages.slice(start).filter((message) => !isCompactionMarker(message));
  const summary = typeof markerMessage.content === "string" ? markerMessage.content : "";
  return { active, summary };
}

/** Only the fields the AI SDK defines on a ModelMessage. */
function strip(message: AgentMessage): ModelMessage {
  const out = { role: message.role, content: message.content } as ModelMessage;
  if (message.providerOptions !== undefined) out.providerOptions = message.providerOptions;
  return out;
}

/**
 * A call-ready history: every tool call answered right after it (a synthetic error result for a lost one) and no
 * result without its call. Stored history is already repaired on resume; this is the safety net for histories
 * written by other code, since one unanswered call makes every later request fail.
 */
export function sanitize(messages: readonly ModelMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  let pending = new Map<string, PendingCall>();
  const flush = () => {
    if (pending.size === 0) return;
    out.push({ role: "tool", content: missingResults([...pending.values()]) });
    pending = new Map();
  };
  for (const message of messages) {
    if (message.role === "tool") {
      const known = new Set(answersOf(message).filter((id) => pending.has(id)));
      const content = message.content.filter(
        (part) => part.type !== "tool-result" || known.has(part.toolCallId),
      );
      for (const id of known) pending.delete(id);
      if (content.length > 0) out.push({ ...message, content });
      continue;
    }
    flush();
    if (message.role === "assistant" && Array.isArray(message.content) && message.content.length === 0)
      continue;
    out.push(message);
    for (const call of callsOf(message)) pending.set(call.toolCallId, call);
  }
  flush();
  return out;
}

/**
 * The model's view of stored messages: after the latest compaction, metadata stripped, tool pairs intact, and with
 * `options` every message made sendable (see {@link sendable}).
 */
export function modelContext(messages: readonly AgentMessage[], options?: SendableOptions): ModelContext {
  const { active, summary } = activeMessages(messages);
  const usable = options ? active.flatMap((message) => sendable(message, options) ?? []) : active;
  const context: ModelContext = { messages: sanitize(usable.map(strip)) };
  if (summary !== undefined) context.summary = summary;
  return context;
}
