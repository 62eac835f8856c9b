import type { SessionMessage, SessionMessagePart } from "../contract/message.js";

/**
 * Recognising tool parts across AI SDK generations:
 * - v5+/v6 static tools: `type: "tool-<name>"`, call and result in one part (`state`, `input`, `output`);
 * - v5+/v6 dynamic tools: `type: "dynamic-tool"` with `toolName`;
 * - legacy shapes: `tool-invocation` (v4, possibly nested under `toolInvocation`), `tool-call` and `tool-result`.
 */

/** Part types that start with `tool-` but are legacy containers rather than a tool named by the suffix. */
const LEGACY_TOOL_TYPES = new Set(["tool-invocation", "tool-call", "tool-result"]);

/** Part states that mean the call has been answered (successfully, with an error, or by a denial). */
const ANSWERED_STATES = new Set(["output-available", "output-error", "output-denied", "result"]);

/** True for a part that carries a tool call and/or its result. */
export function isToolPart(part: unknown): part is SessionMessagePart {
  if (part === null || typeof part !== "object") return false;
  const type = (part as { type?: unknown }).type;
  return typeof type === "string" && (type.startsWith("tool-") || type === "dynamic-tool");
}

/** The AI SDK v4 `tool-invocation` part keeps its fields under `toolInvocation`. */
function invocationOf(part: SessionMessagePart): Record<string, unknown> | undefined {
  const nested = part.toolInvocation;
  return nested !== null && typeof nested === "object" ? (nested as Record<string, unknown>) : undefined;
}

/** The tool call id of a tool part, if it has a string one. */
export function toolCallIdOf(part: SessionMessagePart): string | undefined {
  if (typeof part.toolCallId === "string") return part.toolCallId;
  const id = invocationOf(part)?.toolCallId;
  return typeof id === "string" ? id : undefined;
}

/** The tool name of a tool part: its `toolName`, else the suffix of a static `tool-<name>` type. */
export function toolNameOf(part: SessionMessagePart): string | undefined {
  if (typeof part.toolName === "string") return part.toolName;
  if (part.type.startsWith("tool-") && !LEGACY_TOOL_TYPES.has(part.type))
    return part.type.slice("tool-".length);
  const name = invocationOf(part)?.toolName;
  return typeof name === "string" ? name : undefined;
}

/** The arguments of a tool part: `input`, else legacy `args` (top level or nested v4 invocation). */
export function toolInputOf(part: SessionMessagePart): unknown {
  return part.input ?? part.args ?? invocationOf(part)?.args;
}

/** The answer of a tool part: `output`, else legacy `result` (top level or nested v4 invocation). */
export function toolOutputOf(part: SessionMessagePart): unknown {
  return part.output ?? part.result ?? invocationOf(part)?.result;
}

/** True for a tool part that states a call (every tool part with an id except a bare legacy `tool-result`). */
export function isToolCallPart(part: unknown): part is SessionMessagePart {
  return isToolPart(part) && part.type !== "tool-result" && toolCallIdOf(part) !== undefined;
}

/** True for a tool part that carries an answer to its call: an output, a result, an error or a denial. */
export function hasToolResult(part: unknown): part is SessionMessagePart {
  if (!isToolPart(part) || toolCallIdOf(part) === undefined) return false;
  if (part.type === "tool-result") return true;
  if (part.output !== undefined || part.result !== undefined || part.errorText !== undefined) return true;
  if (typeof part.state === "string" && ANSWERED_STATES.has(part.state)) return true;
  const nested = invocationOf(part);
  return nested !== undefined && (nested.result !== undefined || nested.state === "result");
}

/** The parts of a message, or none when `parts` is not an array (so callers never throw on bad input). */
export function partsOf(message: SessionMessage): readonly unknown[] {
  return Array.isArray(message.parts) ? message.parts : [];
}

/** True when a message contains any tool part. */
export function hasToolParts(message: SessionMessage): boolean {
  return partsOf(message).some(isToolPart);
}

/** The call ids named by any tool part of a message. */
export function toolCallIdsOf(message: SessionMessage): Set<string> {
  const ids = new Set<string>();
  for (const part of partsOf(message)) {
    if (!isToolPart(part)) continue;
    const id = toolCallIdOf(part);
    if (id !== undefined) ids.add(id);
  }
  return ids;
}
