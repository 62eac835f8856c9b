import type { AgentInputItem } from "@openai/agents-core";
import type { SessionMessage } from "../contract/message.js";
import { isCompactionMessage } from "../message/overlay.js";
import { safeString } from "../message/serialize.js";
import { decodeBytes, encodeBytes } from "./bytes.js";

/** The metadata key that holds an Agents SDK item, exactly as it was added. */
export const ITEM_KEY = "openaiAgentsItem";

/**
 * A stored message for one Agents SDK item: the item in metadata (its bytes as tagged base64, ./bytes.ts), its text
 * as a part for search.
 */
export function itemToMessage(item: AgentInputItem, id: string): SessionMessage {
  const text = itemText(item);
  return {
    id,
    role: itemRole(item),
    parts: text === "" ? [] : [{ type: "text", text }],
    metadata: { [ITEM_KEY]: encodeBytes(item) },
  };
}

/** The Agents SDK item a stored message holds; a compaction summary (or a foreign message) reads as a message. */
export function messageToItem(message: SessionMessage): AgentInputItem {
  const stored = (message.metadata as Record<string, unknown> | undefined)?.[ITEM_KEY];
  if (stored !== undefined) return decodeBytes(stored) as AgentInputItem;
  const text = message.parts.flatMap((p) => (typeof p.text === "string" ? [p.text] : [])).join("\n");
  if (isCompactionMessage(message) || message.role === "system") return { role: "system", content: text };
  if (message.role === "assistant") {
    return { role: "assistant", status: "completed", content: [{ type: "output_text", text }] };
  }
  return { role: "user", content: text };
}

function itemRole(item: AgentInputItem): string {
  if ("role" in item && typeof item.role === "string") return item.role;
  const type = "type" in item && typeof item.type === "string" ? item.type : "";
  return type.endsWith("_result") || type.endsWith("_output") ? "tool" : "assistant";
}

/** The readable text of an item (message text, a call's name and arguments, a tool result's output). */
function itemText(item: AgentInputItem): string {
  const record = item as Record<string, unknown>;
  if (record.type === "function_call")
    return `${safeString(record.name)}(${safeString(record.arguments ?? "")})`;
  return textOf(record.content ?? record.output ?? record.summary);
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value))
    return value
      .map(textOf)
      .filter((t) => t !== "")
      .join("\n");
  if (typeof value === "object" && value !== null) {
    const { text } = value as { text?: unknown };
    return typeof text === "string" ? text : "";
  }
  return "";
}
