import type { ModelMessage, ToolResultPart } from "ai";
import { MISSING_RESULT_TEXT } from "../message/missing-result.js";
import { newId } from "./ids.js";
import type { AgentMessage } from "./types.js";

/** A tool call the model made that has no result yet. */
export interface PendingCall {
  toolCallId: string;
  toolName: string;
}

// The text every synthetic result of a lost tool call carries, shared with the chat route (src/ai-sdk).
export { MISSING_RESULT_TEXT };

interface Part {
  type?: unknown;
  toolCallId?: unknown;
  toolName?: unknown;
  providerExecuted?: unknown;
}

function partsOf(message: ModelMessage): Part[] {
  return Array.isArray(message.content) ? (message.content as Part[]) : [];
}

/** Calls a client must answer: tool calls the provider did not execute itself. */
export function callsOf(message: ModelMessage): PendingCall[] {
  if (message.role !== "assistant") return [];
  const calls: PendingCall[] = [];
  for (const part of partsOf(message)) {
    if (part.type !== "tool-call" || part.providerExecuted === true || typeof part.toolCallId !== "string")
      continue;
    calls.push({
      toolCallId: part.toolCallId,
      toolName: typeof part.toolName === "string" ? part.toolName : "",
    });
  }
  return calls;
}

/** Ids answered by the tool-result parts of a tool message. */
export function answersOf(message: ModelMessage): string[] {
  if (message.role !== "tool") return [];
  return partsOf(message)
    .filter((part) => part.type === "tool-result" && typeof part.toolCallId === "string")
    .map((part) => part.toolCallId as string);
}

/** Tool calls after the last user message that still lack a result, in call order. */
export function pendingToolCalls(messages: readonly ModelMessage[]): PendingCall[] {
  let start = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user") {
      start = i;
      break;
    }
  }
  const pending = new Map<string, PendingCall>();
  for (let i = start; i < messages.length; i++) {
    const message = messages[i]!;
    for (const call of callsOf(message)) pending.set(call.toolCallId, call);
    for (const id of answersOf(message)) pending.delete(id);
  }
  return [...pending.values()];
}

/** Error results standing in for calls that will never be answered. */
export function missingResults(calls: readonly PendingCall[]): ToolResultPart[] {
  return calls.map((call) => ({
    type: "tool-result",
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: { type: "error-text", value: MISSING_RESULT_TEXT },
  }));
}

/** A stored tool message answering lost calls, so the next model call is valid. */
export function missingResultsMessage(calls: readonly PendingCall[], turn: number): AgentMessage {
  return {
    id: newId("msg"),
    createdAt: Date.now(),
    role: "tool",
    content: missingResults(calls),
    metadata: { turn, synthetic: "missing-tool-result" },
  };
}

/** The stored assistant note that closes a turn which did not finish, so the model knows its reply was cut off. */
export function interruptedNote(turn: number, reason: string): AgentMessage {
  return {
    id: newId("msg"),
    createdAt: Date.now(),
    role: "assistant",
    content: [{ type: "text", text: `[Response interrupted: ${reason}.]` }],
    metadata: { turn, synthetic: "interrupted", interrupted: true },
  };
}

/** True for an assistant message stored from a step that ended the turn on its own (not to call tools). */
function isFinalAnswer(message: AgentMessage | undefined): boolean {
  const reason = message?.metadata?.finishReason;
  return (
    message?.role === "assistant" &&
    typeof reason === "string" &&
    reason !== "tool-calls" &&
    reason !== "error"
  );
}

/**
 * The messages that close an unfinished turn: error results for its lost tool calls, then the interrupted note.
 * Appending them (instead of rewriting history) keeps storage append-only.
 */
export function closeInterruptedTurn(
  messages: readonly AgentMessage[],
  turn: number,
  reason: string,
): AgentMessage[] {
  const pending = pendingToolCalls(messages);
  const closing: AgentMessage[] = pending.length > 0 ? [missingResultsMessage(pending, turn)] : [];
  // A final answer that was fully stored before the stop needs no note: only the status bookkeeping was lost.
  if (pending.length === 0 && isFinalAnswer(messages[messages.length - 1])) return closing;
  closing.push(interruptedNote(turn, reason));
  return closing;
}
