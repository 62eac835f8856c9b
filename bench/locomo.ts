/**
 * The LoCoMo conversations of the recall protocol (../shared/datasets/README.md) and how a store holds them: one
 * session per conversation, one message per turn, `"<speaker>: <text>"`, the first speaker `user`. Shared by the
 * recall and load benches, so both measure the same store.
 */
import { fileURLToPath } from "node:url";
import type { SessionStore } from "../src/contract/store.js";
import { turnTimes } from "./locomo-times.js";

/** One conversation of the data set. */
export interface Conversation {
  conv: string;
  turns: { id: string; speaker: string; text: string; session?: string; date?: string }[];
  qa: { question: string; evidence?: string[]; category: number }[];
}

/** The data set the benches read unless BENCH_RECALL_DATA names another of the same shape (a held-out one). */
export const LOCOMO_DATA =
  process.env.BENCH_RECALL_DATA ??
  fileURLToPath(new URL("../../shared/datasets/locomo-dev.json", import.meta.url));

/**
 * A turn as the protocol appends it (`"<speaker>: <text>"`, the first speaker `user`, its sitting's time); with
 * `authors`, also its speaker as the message's author (`metadata.author`, docs/RECALL.md#who-said-it), which the
 * protocol does not give.
 */
export function turnMessage(
  turn: Conversation["turns"][number],
  first: string | undefined,
  createdAt: Date | undefined,
  authors = false,
) {
  return {
    id: turn.id,
    role: turn.speaker === first ? "user" : "assistant",
    ...(createdAt ? { createdAt } : {}),
    ...(authors ? { metadata: { author: turn.speaker } } : {}),
    parts: [{ type: "text", text: `${turn.speaker}: ${turn.text}` }],
  };
}

/**
 * Appends every turn of `data` to `store`, as the protocol says (each with its sitting's time, locomo-times.ts);
 * the number of messages written. With `authors`, each turn carries its speaker as its author (turnMessage). With
 * `toolSteps`,
 * the conversation is stored as an agent's: each turn of the second speaker comes after a tool call and its result
 * (messages without text), as an agent answers after a lookup.
 */
export async function seedConversations(
  store: SessionStore,
  data: readonly Conversation[],
  { toolSteps = false, authors = false } = {},
): Promise<number> {
  let messages = 0;
  for (const conv of data) {
    const session = store.session(conv.conv);
    const first = conv.turns[0]?.speaker;
    const times = turnTimes(conv.turns);
    for (const [at, t] of conv.turns.entries()) {
      const createdAt = times[at];
      const role = t.speaker === first ? "user" : "assistant";
      if (toolSteps && role === "assistant") {
        const call = { type: "tool-recall", toolCallId: `${t.id}/call` };
        await session.appendMessage({
          id: `${t.id}/call`,
          role: "assistant",
          parts: [{ ...call, state: "input-available", input: { about: t.speaker } }],
        });
        await session.appendMessage({
          id: `${t.id}/result`,
          role: "tool",
          parts: [{ ...call, state: "output-available", output: { found: 1 } }],
        });
        messages += 2;
      }
      await session.appendMessage(turnMessage(t, first, createdAt, authors));
      messages++;
    }
  }
  return messages;
}
