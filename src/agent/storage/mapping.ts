import type { SessionMessage, SessionMessagePart } from "../../contract/message.js";
import { normalize } from "../codec.js";
import type { AgentMessage, SessionState, UsageEntry } from "../types.js";

/**
 * How an agent session lies in a `SessionStore` (docs/AGENT.md, "Where agent sessions live"): every agent message
 * is one `SessionMessage` on a linear path, with readable `parts` for people, the CLI and the viewer, and the exact
 * ModelMessage under the reserved metadata key {@link AGENT_MESSAGE_KEY}, which is what a load returns.
 */
export const AGENT_MESSAGE_KEY = "agent.message";
/** Metadata key of the ledger entries written with a message (the step's usage rides on the step's last message). */
export const AGENT_USAGE_KEY = "agent.usage";
/** Metadata key of the session's `updatedAt` after the append that wrote the message (its last one); see store.ts. */
export const AGENT_UPDATED_KEY = "agent.updatedAt";
/** Registry `source` of agent sessions: what `list()` selects. */
export const AGENT_SOURCE = "agent";
/** Label of the context block holding a session's header: `_agent_state_<sessionId>`. */
export const HEADER_LABEL = "_agent_state";

/** The small per-session record kept in a context block: everything of a state except messages and their usage. */
export interface AgentHeader {
  v: 1;
  parentId: string | null;
  metadata: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  /** Ledger entries that were not written with a message (a `save()`'s ledger, a message-less append). */
  usage: UsageEntry[];
  /**
   * Where each of `usage` goes in the ledger: after the entries of the path message with this id (null or missing:
   * before every message's entries, as `save()`'s ledger does). Without it a message-less step's entry would load
   * before entries that were written earlier, on messages.
   */
  usageAfter?: (string | null)[];
}

/** Adds a message-less append's ledger entries to the header, placed after those of the leaf `after`. */
export function pushHeaderUsage(
  header: AgentHeader,
  usage: readonly UsageEntry[],
  after: string | null,
): void {
  if (usage.length === 0) return;
  const anchors = header.usageAfter ?? [];
  // Entries of older headers (and of save()) have no anchor: they lead the ledger.
  while (anchors.length < header.usage.length) anchors.push(null);
  header.usage.push(...usage);
  anchors.push(...usage.map(() => after));
  header.usageAfter = anchors;
}

/** The whole ledger in the order it was written: header entries merged with the path messages' entries. */
export function ledgerOf(header: AgentHeader, path: readonly SessionMessage[]): UsageEntry[] {
  const onPath = new Set(path.map((message) => message.id));
  const leading: UsageEntry[] = [];
  const following = new Map<string, UsageEntry[]>();
  header.usage.forEach((entry, i) => {
    const after = header.usageAfter?.[i];
    // An anchor no longer on the path (a message deleted by other code) keeps its entry, at the front.
    if (typeof after !== "string" || !onPath.has(after)) leading.push(entry);
    else following.set(after, [...(following.get(after) ?? []), entry]);
  });
  return [
    ...leading,
    ...path.flatMap((message) => [...usageOf(message), ...(following.get(message.id) ?? [])]),
  ];
}

/** The block key of a session's header. */
export function headerKey(sessionId: string): string {
  return `${HEADER_LABEL}_${sessionId}`;
}

/** The header of a state: its ledger goes here whole, since `save()` rewrites messages without usage. */
export function headerOf(state: SessionState): AgentHeader {
  return {
    v: 1,
    parentId: typeof state.parentId === "string" && state.parentId.length > 0 ? state.parentId : null,
    metadata: normalize(state.metadata && typeof state.metadata === "object" ? state.metadata : {}),
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    usage: normalize(Array.isArray(state.usage?.entries) ? state.usage.entries : []),
  };
}

function dataUrl(value: unknown, mediaType: string): string | undefined {
  if (typeof value !== "string") return undefined;
  if (/^(https?:|data:)/i.test(value)) return value;
  return `data:${mediaType};base64,${value}`;
}

function toolOutput(output: unknown): { output?: unknown; errorText?: string; state: string } {
  if (output === null || typeof output !== "object") return { output, state: "output-available" };
  const { type, value } = output as { type?: unknown; value?: unknown };
  if (type === "error-text" || type === "error-json" || type === "execution-denied") {
    const text = typeof value === "string" ? value : JSON.stringify(value ?? type);
    return { errorText: text ?? String(type), state: "output-error" };
  }
  return { output: value, state: "output-available" };
}

function partOf(part: Record<string, unknown>): SessionMessagePart {
  const mediaType = String(part.mediaType ?? part.mimeType ?? "application/octet-stream");
  switch (part.type) {
    case "text":
      return { type: "text", text: String(part.text ?? "") };
    case "reasoning":
      return { type: "reasoning", text: String(part.text ?? "") };
    case "image":
    case "file": {
      const url = dataUrl(part.type === "image" ? part.image : part.data, mediaType);
      return { type: "file", mediaType, ...(url === undefined ? {} : { url }) } as SessionMessagePart;
    }
    case "tool-call":
      return {
        type: `tool-${String(part.toolName)}`,
        toolCallId: String(part.toolCallId),
        state: "input-available",
        input: part.input,
      };
    case "tool-result":
      return {
        type: `tool-${String(part.toolName)}`,
        toolCallId: String(part.toolCallId),
        ...toolOutput(part.output),
      };
    default:
      // Approval requests and future part kinds: named, not shown as a tool (their data is in the ModelMessage).
      return { type: `data-agent-${String(part.type)}` };
  }
}

/** The readable parts of a ModelMessage: text, reasoning, files, and AI SDK UI tool parts for calls and results. */
export function partsOf(message: AgentMessage): SessionMessagePart[] {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content
    .filter((part): part is Record<string, unknown> => part !== null && typeof part === "object")
    .map(partOf);
}

/**
 * The stored form of an agent message (already normalised: JSON-clean); `usage` rides along under
 * {@link AGENT_USAGE_KEY} when given.
 */
export function toSessionMessage(
  message: AgentMessage,
  usage?: readonly UsageEntry[],
  updatedAt?: number,
): SessionMessage {
  const metadata: Record<string, unknown> = { [AGENT_MESSAGE_KEY]: message };
  if (usage && usage.length > 0) metadata[AGENT_USAGE_KEY] = usage;
  if (updatedAt !== undefined) metadata[AGENT_UPDATED_KEY] = updatedAt;
  const stored: SessionMessage = {
    id: message.id,
    role: String(message.role),
    parts: partsOf(message),
    metadata,
  };
  if (typeof message.createdAt === "number" && Number.isFinite(message.createdAt)) {
    const at = new Date(message.createdAt);
    if (!Number.isNaN(at.getTime())) stored.createdAt = at;
  }
  return stored;
}

function metadataOf(message: SessionMessage): Record<string, unknown> {
  const metadata = message.metadata;
  return metadata !== null && typeof metadata === "object" ? (metadata as Record<string, unknown>) : {};
}

/** The ledger entries a stored message carries. */
export function usageOf(message: SessionMessage): UsageEntry[] {
  const usage = metadataOf(message)[AGENT_USAGE_KEY];
  return Array.isArray(usage) ? (usage as UsageEntry[]) : [];
}

/** The session's `updatedAt` a stored message carries (0 when none). */
export function updatedAtOf(message: SessionMessage): number {
  const at = metadataOf(message)[AGENT_UPDATED_KEY];
  return typeof at === "number" && Number.isFinite(at) ? at : 0;
}

/**
 * The agent message a stored message holds; a message written by other code (a `Session`, an import) becomes a
 * plain-text ModelMessage of its text parts, so an agent can still read a session people edited.
 */
export function fromSessionMessage(message: SessionMessage): AgentMessage {
  const exact = metadataOf(message)[AGENT_MESSAGE_KEY];
  if (exact !== null && typeof exact === "object") return exact as AgentMessage;
  const text = (Array.isArray(message.parts) ? message.parts : [])
    .filter((part) => part?.type === "text")
    .map((part) => part.text ?? "")
    .join("\n");
  const role = ["system", "user", "assistant"].includes(message.role) ? message.role : "user";
  const createdAt = message.createdAt instanceof Date ? message.createdAt.getTime() : 0;
  return { id: message.id, role, content: text, createdAt } as AgentMessage;
}
