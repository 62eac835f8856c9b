/**
 * What a capture stores of eve's projected history: each message kept the way the agent runtime keeps a
 * ModelMessage (agent/storage/mapping.ts: readable parts for search, the CLI and learning, and the exact message,
 * its files as base64, in metadata), under an id derived from the eve session and the message (ids.ts). The
 * recalled records this door placed in eve's context come back in that history as user messages; they are left
 * out, so recall never stores what it recalled.
 */
import { normalize } from "../agent/codec.js";
import { toSessionMessage } from "../agent/storage/mapping.js";
import type { AgentMessage } from "../agent/types.js";
import type { SessionMessage } from "../contract/message.js";
import type { ContentIds } from "./ids.js";

/** The first line of every message recall gives eve (so a capture knows it for its own and leaves it out). */
export const RECALL_HEADER = "[agent-session memory]";

/** The metadata key of a captured message's key-independent name (ContentIds.tag, sealed with the message). */
export const CAPTURED_KEY = "eveCaptured";

/** A ModelMessage as eve passes it (role and content; anything else is kept as it is). */
export interface EveMessage {
  readonly role: string;
  readonly content: unknown;
}

/** True when `message` is one of the records recall placed in eve's context. */
function isRecalled(message: EveMessage): boolean {
  if (message.role !== "user") return false;
  const { content } = message;
  const text =
    typeof content === "string"
      ? content
      : Array.isArray(content) && typeof content[0]?.text === "string"
        ? (content[0].text as string)
        : "";
  return text.startsWith(RECALL_HEADER);
}

/** A message that can be stored: a role a conversation has, and content. */
function storable(message: EveMessage): boolean {
  return ["user", "assistant", "tool", "system"].includes(message.role) && message.content !== undefined;
}

/**
 * The stored form of each message of `history` that is eve's conversation (not a recalled record), oldest first,
 * each under its derived id (an identical earlier message of the same history makes the id of the next one differ)
 * with its key-independent name in its metadata ({@link CAPTURED_KEY}).
 */
export function capturedMessages(
  ids: ContentIds,
  eveSessionId: string,
  history: readonly EveMessage[],
): SessionMessage[] {
  const seen = new Map<string, number>();
  const out: SessionMessage[] = [];
  const now = Date.now();
  for (const message of history) {
    if (!storable(message) || isRecalled(message)) continue;
    const exact = normalize(message) as unknown as AgentMessage;
    const canonical = JSON.stringify([exact.role, exact.content]);
    const occurrence = seen.get(canonical) ?? 0;
    seen.set(canonical, occurrence + 1);
    const id = ids.captured(eveSessionId, canonical, occurrence);
    const stored = toSessionMessage({ ...exact, id, createdAt: now } as AgentMessage);
    stored.metadata = {
      ...(stored.metadata as object),
      [CAPTURED_KEY]: ids.tag(eveSessionId, canonical, occurrence),
    };
    out.push(stored);
  }
  return out;
}
