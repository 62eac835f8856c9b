import type { ModelMessage } from "ai";
import { describe } from "../message/describe.js";
import { normalize } from "./codec.js";

/** A schema of the AI SDK (`modelMessageSchema`): only whether a value passes is used. */
export interface MessageSchema {
  safeParse(value: unknown): { success: boolean };
}

type Part = { type?: unknown; toolName?: unknown; output?: unknown };

/** Whether `message` is still a valid ModelMessage after the JSON round trip every storage makes. */
function survivesStorage(message: unknown, schema: MessageSchema): boolean {
  try {
    return schema.safeParse(normalize(message)).success;
  } catch {
    return false; // a cycle or a throwing toJSON
  }
}

/** An error output saying what the tool returned, in place of a value JSON cannot hold. */
function unstorableOutput(part: Part): { type: "error-text"; value: string } {
  const output = part.output as { value?: unknown } | undefined;
  const value = output && typeof output === "object" && "value" in output ? output.value : output;
  const name = typeof part.toolName === "string" ? `Tool "${part.toolName}"` : "The tool";
  // A stored output of the wrong shape (written by other code, or before this check) is not what the tool returned.
  if (!output || typeof output !== "object" || !("value" in output))
    return {
      type: "error-text",
      value: `${name}'s stored result is not a valid tool output, so it cannot be sent.`,
    };
  return {
    type: "error-text",
    value: `${name} returned ${describe(value)}, which JSON cannot hold, so its result could not be stored or sent to the model.`,
  };
}

/**
 * A step's message as it can be stored: a tool result whose output JSON cannot hold (a function, a symbol, a cycle)
 * would be stored without its value, and that message would fail the schema check of every later model call; such
 * an output becomes an error result saying what the tool returned. Other messages are returned unchanged.
 */
export function storableToolResults<M extends ModelMessage>(message: M, schema: MessageSchema): M {
  if (!Array.isArray(message.content) || survivesStorage(message, schema)) return message;
  const content = (message.content as Part[]).map((part) =>
    part.type === "tool-result" && !survivesStorage({ role: message.role, content: [part] }, schema)
      ? { ...part, output: unstorableOutput(part) }
      : part,
  );
  return { ...message, content } as M;
}
