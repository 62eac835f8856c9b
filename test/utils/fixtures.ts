import type { SessionMessage, SessionMessagePart } from "../../src/contract/message.js";

/** A message with one text part. */
export function text(id: string, body: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text: body }] };
}

/** An assistant message with one AI SDK static tool part (`tool-<name>`), answered unless output is undefined. */
export function toolCall(id: string, output: unknown, name = "read", callId = `tc-${id}`): SessionMessage {
  const part: SessionMessagePart = {
    type: `tool-${name}`,
    toolCallId: callId,
    state: output === undefined ? "input-available" : "output-available",
    input: { path: `/files/${id}.txt` },
  };
  if (output !== undefined) part.output = output;
  return { id, role: "assistant", parts: [part] };
}

/** A synthetic overlay message as getHistory returns it. */
export function overlay(id: string, summary: string): SessionMessage {
  return { id: `compaction_${id}`, role: "assistant", parts: [{ type: "text", text: summary }] };
}

/** Ids of messages. */
export function ids(messages: readonly SessionMessage[]): string[] {
  return messages.map((message) => message.id);
}

/** Deep snapshot used to prove inputs were not mutated. */
export function snapshot(value: unknown): string {
  return JSON.stringify(value);
}
