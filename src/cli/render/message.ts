import type { SessionMessage, SessionMessagePart } from "../../contract/message.js";
import { preview } from "../output.js";

function compact(value: unknown): string {
  if (value === undefined) return "";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return preview(text ?? "", 100);
}

/** One part as a line of text: text as is, tool calls with their input and output, anything else by its type. */
export function partText(part: SessionMessagePart): string {
  if (part.type === "text") return part.text ?? "";
  if (part.type === "reasoning") return `[reasoning] ${part.text ?? part.reasoning ?? ""}`;
  const tool = part.toolName ?? (part.type.startsWith("tool-") ? part.type.slice("tool-".length) : undefined);
  if (tool !== undefined || part.type === "dynamic-tool") {
    const output = part.output ?? part.result ?? part.errorText;
    const state = part.state ? ` (${part.state})` : "";
    const io = `${compact(part.input ?? part.args)}${output === undefined ? "" : ` → ${compact(output)}`}`;
    return `[tool ${tool ?? "?"}${state}] ${io}`.trimEnd();
  }
  return `[${part.type}]`;
}

/** The lines a message shows as: its parts in order, multi-line text kept. */
export function messageLines(message: SessionMessage): string[] {
  const parts = Array.isArray(message.parts) ? message.parts : [];
  return parts.flatMap((part) => partText(part).split("\n"));
}
