import { hideMedia, safeString } from "../message/serialize.js";
import type { AiModule } from "./ai.js";
import { activeMessages } from "./context.js";
import { newId } from "./ids.js";
import { type ModelObject, modelLabel } from "./model.js";
import type { AgentMessage, ModelPricing, UsageEntry } from "./types.js";
import { usageEntry } from "./usage.js";

/** Options of a compaction. */
export interface AgentCompactOptions {
  /** Messages kept verbatim after the summary (default 6); the cut moves back to a user message. */
  keepLastMessages?: number;
  /** Extra instructions for the summary (what to keep, which language, …). */
  instructions?: string;
}

/** What a compaction stores: the marker holding the summary, and the ledger entry of the summarising call. */
export interface Compaction {
  marker: AgentMessage;
  entry: UsageEntry;
}

const SUMMARY_SYSTEM =
  "You compress conversations between a user and an AI assistant. Write a summary that lets the assistant continue " +
  "the conversation without the original messages: the user's goals and preferences, decisions and facts " +
  "established, tool results that still matter, and open questions or unfinished work. Be specific and concise.";

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

function show(value: unknown, max: number): string {
  try {
    // Inline media shows as a placeholder: its base64 would fill the clip and hide what the tool said beside it.
    return clip(typeof value === "string" ? value : JSON.stringify(value, hideMedia), max);
  } catch {
    return "[unserialisable]";
  }
}

/** A plain-text transcript, so the summary call needs no tool definitions and cannot trip over tool pairing. */
export function transcript(messages: readonly AgentMessage[]): string {
  const lines: string[] = [];
  for (const message of messages) {
    if (typeof message.content === "string") {
      lines.push(`${message.role}: ${message.content}`);
      continue;
    }
    for (const part of message.content as Array<Record<string, unknown>>) {
      if (part.type === "text") lines.push(`${message.role}: ${safeString(part.text)}`);
      else if (part.type === "tool-call")
        lines.push(`assistant called ${safeString(part.toolName)}(${show(part.input, 500)})`);
      else if (part.type === "tool-result") {
        const output = part.output as { value?: unknown } | undefined;
        lines.push(`${safeString(part.toolName)} returned: ${show(output?.value ?? output, 1000)}`);
      } else if (part.type === "file" || part.type === "image")
        lines.push(`${message.role}: [attached ${part.type}]`);
    }
  }
  return lines.join("\n");
}

/**
 * Summarises the active history except its last messages and returns the marker to append. Nothing is deleted: the
 * marker records where the kept tail starts, and later calls send the summary (in the system prompt) plus that tail.
 * Returns undefined when there is nothing before the kept tail to summarise.
 */
export async function summarize(args: {
  ai: AiModule;
  model: ModelObject;
  messages: readonly AgentMessage[];
  options: AgentCompactOptions;
  turn: number;
  pricing: ModelPricing | undefined;
  abortSignal?: AbortSignal;
}): Promise<Compaction | undefined> {
  const { active, summary: previous } = activeMessages(args.messages);
  const keep = Math.max(1, Math.floor(args.options.keepLastMessages ?? 6));
  let start = active.length - keep;
  // The kept tail starts at a user message: a tail opening with tool results would have lost their calls.
  while (start > 0 && (active[start]?.role !== "user" || active[start]?.metadata?.synthetic !== undefined))
    start--;
  if (start <= 0) return undefined;
  const older = active.slice(0, start);
  const prompt = [
    previous ? `Summary of what came before:\n${previous}\n` : "",
    `Conversation to summarise:\n${transcript(older)}`,
    args.options.instructions ? `\nInstructions: ${args.options.instructions}` : "",
  ].join("\n");
  const result = await args.ai.generateText({
    model: args.model,
    system: SUMMARY_SYSTEM,
    prompt,
    ...(args.abortSignal ? { abortSignal: args.abortSignal } : {}),
  });
  const entry = usageEntry(result.usage, {
    kind: "compaction",
    turn: args.turn,
    step: 0,
    model: modelLabel(args.model),
    pricing: args.pricing,
  });
  const marker: AgentMessage = {
    id: newId("msg"),
    createdAt: Date.now(),
    role: "system",
    content: result.text,
    metadata: {
      synthetic: "compaction",
      turn: args.turn,
      compaction: { keepFromId: active[start]!.id, summarizedMessages: older.length },
    },
  };
  return { marker, entry };
}
