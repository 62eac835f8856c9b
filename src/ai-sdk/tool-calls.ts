import type { ToolSet } from "ai";
import type { SessionMessagePart } from "../contract/message.js";
import { MISSING_RESULT_TEXT } from "../message/missing-result.js";
import { toolNameOf } from "../utils/tool-parts.js";

type Part = SessionMessagePart & Record<string, unknown>;

/** True for a tool part (`tool-<name>` or `dynamic-tool`) with a string `toolCallId`. */
export function isCall(part: Part): boolean {
  return (
    (part.type === "dynamic-tool" || part.type.startsWith("tool-")) && typeof part.toolCallId === "string"
  );
}

/** True for a call stored without a result that the provider does not answer: the server or the page must. */
export function lacksResult(part: Part): boolean {
  return (
    isCall(part) &&
    part.providerExecuted !== true &&
    (part.state === "input-available" || part.state === "input-streaming")
  );
}

/**
 * True when the page may give the call's result. With the app's `tools`, only a call of a tool without `execute`
 * (a client tool: a tool with `execute` runs on the server, and a name not in `tools` is nobody's); without them
 * every call, since nothing says which run on the server.
 */
export function isClientCall(part: Part, tools: ToolSet | undefined): boolean {
  if (tools === undefined) return true;
  const name = toolNameOf(part);
  if (name === undefined || !Object.hasOwn(tools, name)) return false;
  return tools[name]?.execute === undefined;
}

/**
 * The parts with each call `lost` selects closed by the server with an error result ({@link MISSING_RESULT_TEXT},
 * the agent runtime's wording), so the model reads a valid history and nobody can answer them later; the same
 * array when none is selected.
 */
export function closeCalls<P extends SessionMessagePart>(parts: P[], lost: (part: Part) => boolean): P[] {
  if (!parts.some((part) => lost(part as Part))) return parts;
  return parts.map((part) =>
    lost(part as Part) ? { ...part, state: "output-error", errorText: MISSING_RESULT_TEXT } : part,
  );
}
