// One batch of a session's unlearned messages: a window, ended early where a sitting ends.
import type { Fact, FactScope, FactStore, LearnableMessage } from "../contract/facts.js";
import { promptText } from "./prompt.js";
import { queryOf } from "./words.js";

/**
 * The first batch of `read` (messages in store order, at most a window): up to the first pause longer than
 * `sittingGapMs` between two messages, so a batch never spans two sittings.
 */
export function firstBatch(read: readonly LearnableMessage[], sittingGapMs: number): LearnableMessage[] {
  const batch: LearnableMessage[] = [];
  for (const message of read) {
    const last = batch[batch.length - 1];
    if (last !== undefined && message.createdAt - last.createdAt > sittingGapMs) break;
    batch.push(message);
  }
  return batch;
}

/** The batch's messages as the extractor sees them: those with text, each cut to the prompt's bound (marked). */
export function promptMessages(batch: readonly LearnableMessage[]): LearnableMessage[] {
  return batch
    .filter((message) => message.text.trim() !== "")
    .map((message) => ({ ...message, text: promptText(message.text) }));
}

/**
 * The current facts shown with a batch, at most `limit`: half found by the batch's words (best first), the rest
 * the scope's newest, each once. Two bounded reads, whatever the scope holds.
 */
export async function knownFacts(
  store: FactStore,
  scope: FactScope,
  batch: readonly LearnableMessage[],
  limit: number,
): Promise<Fact[]> {
  if (limit === 0) return [];
  const query = queryOf(batch.map((message) => message.text).join("\n"));
  const found = query === "" ? [] : await store.search(scope, query, { limit: Math.ceil(limit / 2) });
  const newest = await store.list(scope, { limit });
  const known = new Map<string, Fact>();
  for (const fact of [...found.map((hit) => hit.fact), ...newest.facts]) {
    if (known.size >= limit) break;
    if (fact.status === "current") known.set(fact.id, fact);
  }
  return [...known.values()];
}
