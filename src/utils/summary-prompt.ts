import type { SessionMessage, SessionMessagePart } from "../contract/message.js";
import { jsonWithoutMedia, renderValue, safeString, sliceChars } from "../message/serialize.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { isToolPart, partsOf, toolInputOf, toolNameOf, toolOutputOf } from "./tool-parts.js";

/** Tool inputs, outputs and errors are cut to this many characters in the prompt. */
const TOOL_FIELD_CHARS = 500;

/** The four sections every summary must have, each with a hint of what belongs there. */
const SECTIONS = `## Topic
[The subject of the conversation]

## Key Points
[Facts, decisions and conclusions that were reached]

## Current State
[What has been done so far and what is still under way]

## Open Items
[Unanswered questions, pending tasks and agreed next steps]`;

/**
 * Target size of a summary: a fifth of the heuristic token estimate of what it replaces, at least 100 tokens.
 * Always the heuristic, so the budget does not depend on which token counter picked the boundaries.
 */
export function computeSummaryBudget(messages: readonly SessionMessage[]): number {
  return Math.max(100, Math.floor(estimateMessageTokens(messages) * 0.2));
}

/**
 * One line of tool data; strings are shown as they are and everything else as JSON, never `[object Object]`.
 * Inline media shows as a placeholder: its base64 would fill the line and hide what the tool said beside it.
 */
function toolField(label: string, value: unknown, asJson: boolean): string {
  const text = typeof value === "string" && !asJson ? value : (jsonWithoutMedia(value) ?? safeString(value));
  return `${label}: ${sliceChars(text, TOOL_FIELD_CHARS)}`;
}

function renderToolPart(part: SessionMessagePart): string {
  const lines = [`[Tool: ${toolNameOf(part) ?? "unknown"}]`];
  const input = toolInputOf(part);
  // Inputs stay JSON even when they are strings, as in the reference; outputs are readable text or JSON.
  if (input !== undefined && input !== null) lines.push(toolField("Input", input, true));
  const output = toolOutputOf(part);
  if (output !== undefined && output !== null) lines.push(toolField("Output", output, false));
  if (typeof part.errorText === "string" && part.errorText.length > 0) {
    lines.push(toolField("Error", part.errorText, false));
  }
  return lines.join("\n");
}

/** `[role]`, the text parts joined by newlines, then one block per tool part. */
function renderMessage(message: SessionMessage): string {
  const texts: string[] = [];
  const tools: string[] = [];
  for (const part of partsOf(message)) {
    if (isToolPart(part)) {
      tools.push(renderToolPart(part));
    } else if (part !== null && typeof part === "object") {
      const { type, text } = part as { type?: unknown; text?: unknown };
      if (type === "text") texts.push(typeof text === "string" ? text : renderValue(text ?? ""));
    }
  }
  const head = `[${safeString(message.role)}]\n${texts.join("\n")}`;
  return tools.length > 0 ? `${head}\n${tools.join("\n")}` : head;
}

/**
 * The summariser prompt for `messages`: a first summary, or (when `previousSummary` is non-blank) an update of
 * that summary with the new turns; both ask for the four-section format in about `budget` tokens.
 */
export function buildSummaryPrompt(
  messages: readonly SessionMessage[],
  previousSummary: string | null | undefined,
  budget: number,
): string {
  const conversation = messages.map(renderMessage).join("\n\n---\n\n");
  const rules = `Aim for ~${budget} tokens. Stick to what the conversation actually says: do not invent file paths, commands, names or other details that were not mentioned. Reply with only the summary body, nothing before or after it.`;

  if (typeof previousSummary === "string" && previousSummary.trim().length > 0) {
    return `An earlier part of this conversation has already been summarized. More turns have happened since; fold them into the summary.

PREVIOUS SUMMARY:
${previousSummary}

NEW TURNS TO INCORPORATE:
${conversation}

Rewrite the summary so it covers both. Keep every fact from the previous summary that still matters, add what the new turns contribute, and drop something only when it is clearly out of date.

Use exactly these sections:

${SECTIONS}

${rules}`;
  }

  return `Write a concise summary of the conversation below that keeps everything needed to carry it on later.

CONVERSATION TO SUMMARIZE:
${conversation}

Use exactly these sections:

${SECTIONS}

${rules}`;
}
