/**
 * The fact channel's subject rule (docs/FACTS.md#recall): a question that names the subject of some of the facts it
 * found (their `about`) asks about that subject, so a fact about someone else comes after the facts about it. Such a
 * fact matched the name through its text ("Caroline thanks Melanie for the gift" for a question about Melanie), which
 * says little about what the named person did: on LoCoMo dev, among the first ten facts of a question naming one
 * speaker, 13.5 % of those about that speaker name an answer turn and 1.4 % of those about the other one.
 */
import type { FactHit } from "../contract/facts.js";
import { foldedWords as wordsOf } from "./tokens.js";

/**
 * `hits` with the facts about another subject moved after the rest, each part in its order, when the question
 * names exactly one of the facts' subjects (every word of an `about` is a word of `query`); unchanged otherwise (no
 * subject named, or several: the question asks about them together). A fact without `about` is about no one else
 * and keeps its place among the rest. Ranks are renumbered.
 */
export function subjectFirst(hits: readonly FactHit[], query: string): FactHit[] {
  const asked = new Set(wordsOf(query));
  const subjects = new Map<string, string | null>();
  const named = new Set<string>();
  for (const { fact } of hits) {
    if (fact.about === null || subjects.has(fact.about)) continue;
    const words = wordsOf(fact.about);
    // A subject is one person or thing whatever its spelling: "Dana" and "dana" are one.
    const key = words.length === 0 ? null : words.join(" ");
    subjects.set(fact.about, key);
    if (key !== null && words.every((word) => asked.has(word))) named.add(key);
  }
  if (named.size !== 1) return [...hits];
  const isOther = (about: string | null) => {
    const key = about === null ? null : subjects.get(about);
    return key != null && !named.has(key);
  };
  const first = hits.filter(({ fact }) => !isOther(fact.about));
  if (first.length === hits.length) return [...hits];
  const others = hits.filter(({ fact }) => isOther(fact.about));
  return [...first, ...others].map((hit, i) => ({ ...hit, rank: i + 1 }));
}
