import type { SessionMessage, SessionMessagePart } from "../contract/message.js";
import { hasToolResult, isToolCallPart, toolCallIdOf, toolNameOf } from "./tool-parts.js";

/** Result text of a stub that stands in for a tool result lost to compaction. */
const STUB_RESULT = "[Result from earlier conversation — see context summary above]";

/** A part that carries only a result (legacy `tool-result`), as opposed to a call that may also hold its result. */
function isResultOnly(part: unknown): part is SessionMessagePart {
  return hasToolResult(part) && !isToolCallPart(part);
}

/** Call ids named by the tool parts `counts` accepts (it sees each part with its message's role). */
function callIds(
  messages: readonly SessionMessage[],
  counts: (role: string, part: unknown) => boolean,
): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (!Array.isArray(message.parts)) continue;
    for (const part of message.parts) {
      if (!counts(message.role, part)) continue;
      const id = toolCallIdOf(part);
      if (id !== undefined) ids.add(id);
    }
  }
  return ids;
}

/** True for a result whose call is gone: a result-only part, or a call+result part outside an assistant message. */
function isOrphanedResult(part: unknown, role: string, calls: ReadonlySet<string>): boolean {
  if (!hasToolResult(part)) return false;
  if (role === "assistant" && !isResultOnly(part)) return false;
  const id = toolCallIdOf(part);
  return id !== undefined && !calls.has(id);
}

function stubFor(callId: string, callPart: SessionMessagePart | undefined): SessionMessage {
  return {
    id: `stub-${callId}`,
    role: "assistant",
    parts: [
      {
        type: "tool-result",
        toolCallId: callId,
        toolName: (callPart && toolNameOf(callPart)) ?? "unknown",
        result: STUB_RESULT,
      },
    ],
    createdAt: new Date(),
  };
}

/**
 * Repairs tool call/result pairing after messages were cut out: drops results whose call no longer appears in
 * an assistant message, adds a `stub-<callId>` result after each call that lost its result, and drops messages
 * left without parts. Returns a new array; messages it does not change keep their identity.
 */
export function sanitizeToolPairs(messages: SessionMessage[]): SessionMessage[] {
  // Calls stated by assistant messages (a call answered in the same part counts too), and every call answered
  // anywhere: an output, a result, an error or a denial.
  const calls = callIds(messages, (role, part) => role === "assistant" && isToolCallPart(part));
  const answers = callIds(messages, (_role, part) => hasToolResult(part));

  const cleaned = messages.map((message) => {
    if (!Array.isArray(message.parts)) return message;
    const parts = message.parts.filter((part) => !isOrphanedResult(part, message.role, calls));
    return parts.length === message.parts.length ? message : { ...message, parts };
  });

  const stubbed = new Set<string>();
  const patched: SessionMessage[] = [];
  for (const message of cleaned) {
    patched.push(message);
    if (message.role !== "assistant" || !Array.isArray(message.parts)) continue;
    for (const part of message.parts) {
      if (!isToolCallPart(part)) continue;
      const id = toolCallIdOf(part);
      // One stub per lost result, placed after the first assistant message that made the call.
      if (id === undefined || answers.has(id) || stubbed.has(id)) continue;
      stubbed.add(id);
      patched.push(stubFor(id, part));
    }
  }

  // A message without parts is invalid for model APIs, whether it started empty or lost its last part above.
  return patched.filter((message) => Array.isArray(message.parts) && message.parts.length > 0);
}
