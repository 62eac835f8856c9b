/**
 * A LangChain message (what a graph's messages channel holds) as the session message recall indexes (recall.ts):
 * its LangChain id as the message id, its type as the role, its text as text parts, an AI message's tool calls and a
 * tool message's result as the AI SDK's tool parts (as the agent runtime's mapping writes them).
 */
import type { SessionMessage, SessionMessagePart } from "../contract/message.js";
import { canBeStored } from "../message/ids.js";

// LangChain's message types to the roles the library's reads and prompts know; others keep their type.
const ROLES: Record<string, string> = { human: "user", ai: "assistant", tool: "tool", system: "system" };

type Loose = Record<string, unknown>;

/** The LangChain type of `value` ("human", "ai", "tool", …), or undefined when it is not a LangChain message. */
export function langchainType(value: unknown): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const m = value as { getType?: () => unknown; _getType?: () => unknown };
  const type = typeof m.getType === "function" ? m.getType() : m._getType?.();
  return typeof type === "string" ? type : undefined;
}

/** The id of a LangChain message (undefined: none a message can be stored under, or not a message). */
export function langchainId(value: unknown): string | undefined {
  if (langchainType(value) === undefined) return undefined;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" && id.length > 0 && canBeStored(id) ? id : undefined;
}

// The text blocks of a content (a string, or a list of blocks of which `text` ones are read).
function textsOf(content: unknown): string[] {
  if (typeof content === "string") return content.length > 0 ? [content] : [];
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const block of content) {
    if (typeof block === "string" && block.length > 0) texts.push(block);
    else if (block && typeof block === "object" && (block as Loose).type === "text") {
      const text = (block as Loose).text;
      if (typeof text === "string" && text.length > 0) texts.push(text);
    }
  }
  return texts;
}

/** The session message of a LangChain message with an id (undefined: not one, or no id to keep it by). */
export function sessionMessageOf(value: unknown): SessionMessage | undefined {
  const type = langchainType(value);
  const id = langchainId(value);
  if (type === undefined || id === undefined) return undefined;
  const m = value as Loose;
  const parts: SessionMessagePart[] = [];
  if (type === "tool") {
    const name = typeof m.name === "string" && m.name.length > 0 ? m.name : "tool";
    const output = textsOf(m.content).join("\n");
    parts.push({
      type: `tool-${name}`,
      toolCallId: String(m.tool_call_id ?? ""),
      ...(m.status === "error"
        ? { state: "output-error", errorText: output }
        : { state: "output-available", output: m.content }),
    });
  } else {
    for (const text of textsOf(m.content)) parts.push({ type: "text", text });
  }
  if (type === "ai" && Array.isArray(m.tool_calls)) {
    for (const call of m.tool_calls as Loose[]) {
      parts.push({
        type: `tool-${String(call.name ?? "tool")}`,
        toolCallId: String(call.id ?? ""),
        state: "input-available",
        input: call.args ?? {},
      });
    }
  }
  const name = typeof m.name === "string" && m.name.length > 0 && type !== "tool" ? { name: m.name } : {};
  return {
    id,
    role: ROLES[type] ?? type,
    parts,
    metadata: { langgraph: { type, ...name } },
  };
}
