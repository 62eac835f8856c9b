/**
 * Recall at turn start and after compaction (docs/EVE.md, "Recall"): the owner's current facts (the profile
 * block's rendering) and the ranked recall of the turn's latest user text over the scope's sessions, together
 * within the token budget, as two records with stable ids, so each turn's recall supersedes the one before in eve's
 * context instead of piling up beside it. A hit whose text eve's context already holds is left out.
 */

import { recallQuery, recallSection } from "../ai-sdk/memory-recall.js";
import type { Prompt } from "../ai-sdk/memory-types.js";
import { hasFactStore } from "../contract/facts.js";
import { ownerProfile } from "../facts/profile.js";
import { CHARS_PER_TOKEN, estimateStringTokens } from "../message/tokens.js";
import type { EveMessage } from "./messages.js";
import { RECALL_HEADER } from "./messages.js";
import type { MemorySettings } from "./options.js";
import { type Place, recallSessions, sessionIdAt } from "./scope.js";

/** A recall's answer, in eve's `MemoryRecallResult` shape. */
export type Recalled = { messages: { id: string; content: string }[] } | null;

/** The ids of the two records (stable: a later turn's replaces the earlier one in eve's context). */
export const FACTS_RECORD = "agent-session-facts";
export const HITS_RECORD = "agent-session-recall";

const textOf = (message: EveMessage): string => {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type?: unknown; text?: unknown }) =>
      part?.type === "text" && typeof part.text === "string" ? part.text : "",
    )
    .join(" ");
};

/** The recall query: the latest user text of the turn's input, else of the history (a standalone compaction). */
function queryOf(input: readonly EveMessage[], history: readonly EveMessage[]): string | null {
  const asked = (m: EveMessage) => m.role === "user" && !textOf(m).startsWith(RECALL_HEADER);
  const latest = [...input].reverse().find(asked) ?? [...history].reverse().find(asked);
  if (latest === undefined) return null;
  return recallQuery([{ role: "user", content: [{ type: "text", text: textOf(latest) }] } as Prompt]);
}

/** The owner's current facts as the profile block renders them, "" without any (or on a store without facts). */
async function factsOf(place: Place, maxTokens: number): Promise<string> {
  return hasFactStore(place.store) ? ownerProfile(place.store, place.owner, maxTokens) : "";
}

/** The recall records of one operation (see the file's comment). */
export async function recallAt(
  settings: MemorySettings,
  place: Place,
  input: readonly EveMessage[],
  history: readonly EveMessage[],
): Promise<Recalled> {
  const { recall } = settings;
  const messages: { id: string; content: string }[] = [];
  let spent = 0;
  if (recall.facts) {
    const profile = await factsOf(place, Math.max(128, Math.floor(recall.maxTokens / 2)));
    const content = `${RECALL_HEADER} facts\n${profile === "" ? "No facts are known about the user yet." : profile}`;
    spent = estimateStringTokens(content);
    messages.push({ id: FACTS_RECORD, content });
  }
  const query = recall.limit > 0 ? queryOf(input, history) : null;
  if (query !== null) {
    const sessionIds = await recallSessions(place, recall.across);
    const inContext = new Set(history.map(textOf).filter((t) => t !== ""));
    const found =
      sessionIds?.length === 0
        ? []
        : await place.view.search(query, {
            limit: Math.min(recall.limit * 4, 200),
            facts: false,
            ...(sessionIds ? { sessionIds } : {}),
          });
    const hits = found.filter((hit) => !inContext.has(hit.content));
    const maxChars = Math.max(200, (recall.maxTokens - spent) * CHARS_PER_TOKEN - 200);
    const section = recallSection(
      hits,
      new Set(),
      { limit: recall.limit, maxChars, scope: "owner" },
      sessionIdAt(place),
    );
    messages.push({
      id: HITS_RECORD,
      content: `${RECALL_HEADER} recall\n${section ?? "No earlier message matches this turn."}`,
    });
  }
  return messages.length === 0 ? null : { messages };
}
