/**
 * LoCoMo's observations as a recorded extractor (../shared/datasets/README.md, locomo-dev-observations.json): the
 * facts its authors had a model derive from each sitting, each naming its source turns, replayed without a model.
 * Each sitting's facts are added once its turns are stored, in the conversation's own scope (the session has no
 * owner), so recall with facts is measured as a learner would leave the store.
 */

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type FactCapableStore, hasFactStore } from "../src/contract/facts.js";
import type { SessionStore } from "../src/contract/store.js";
import { type Conversation, turnMessage } from "./locomo.js";
import { turnTimes } from "./locomo-times.js";

/** The observations of one conversation. */
export interface Observations {
  conv: string;
  observations: { session: number; speaker: string; text: string; sources: string[] }[];
}

/** The observations the recall bench replays unless BENCH_RECALL_FACTS names another file of the same shape. */
export const LOCOMO_OBSERVATIONS =
  process.env.BENCH_RECALL_FACTS ??
  fileURLToPath(new URL("../../shared/datasets/locomo-dev-observations.json", import.meta.url));

/** The observations file's contents, or why the facts rows are skipped. */
export function loadObservations(file = LOCOMO_OBSERVATIONS): Observations[] | { skipped: string } {
  if (!existsSync(file)) return { skipped: `no observations at ${file}: the facts rows are skipped` };
  return JSON.parse(readFileSync(file, "utf8")) as Observations[];
}

/** A turn's sitting (`D3:12` → 3). */
const sittingOf = (turnId: string): number => Number(/^D(\d+):/.exec(turnId)?.[1] ?? Number.NaN);

/**
 * Appends every turn of `data` as the protocol says (seedConversations' shape) and, after each sitting's last turn,
 * adds that sitting's recorded facts: sources = its turn ids, `about` = the speaker, producer "recorded:locomo"; in
 * the conversation's own scope, or `owner`'s (the caller registers the conversations with it first). With
 * `authors`, each turn carries its speaker as its author (turnMessage).
 * The number of facts added.
 */
export async function seedWithFacts(
  store: SessionStore,
  data: readonly Conversation[],
  observations: readonly Observations[],
  owner?: string,
  authors = false,
): Promise<number> {
  if (!hasFactStore(store)) throw new Error(`the ${store.backend} store has no fact store`);
  const bySitting = new Map<string, Map<number, Observations["observations"]>>();
  for (const { conv, observations: facts } of observations) {
    const sittings = new Map<number, Observations["observations"]>();
    for (const fact of facts) sittings.set(fact.session, [...(sittings.get(fact.session) ?? []), fact]);
    bySitting.set(conv, sittings);
  }
  let added = 0;
  for (const conv of data) {
    const session = store.session(conv.conv);
    const first = conv.turns[0]?.speaker;
    const sittings = bySitting.get(conv.conv);
    const times = turnTimes(conv.turns);
    for (const [i, t] of conv.turns.entries()) {
      const createdAt = times[i];
      await session.appendMessage(turnMessage(t, first, createdAt, authors));
      const sitting = sittingOf(t.id);
      const next = conv.turns[i + 1];
      if (next !== undefined && sittingOf(next.id) === sitting) continue;
      added += await addSitting(store, conv.conv, sittings?.get(sitting) ?? [], owner);
    }
  }
  return added;
}

async function addSitting(
  store: FactCapableStore,
  sessionId: string,
  facts: Observations["observations"],
  owner?: string,
): Promise<number> {
  if (facts.length === 0) return 0;
  const observedAt = Date.now();
  const added = await store.facts.add(
    owner === undefined ? { sessionId } : { owner },
    facts.map((fact) => ({
      text: fact.text,
      about: fact.speaker,
      observedAt,
      sources: fact.sources.map((messageId) => ({ sessionId, messageId })),
      producer: "recorded:locomo",
    })),
  );
  return added.length;
}
