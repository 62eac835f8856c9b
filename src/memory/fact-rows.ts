/** The memory store's fact rows and the index of them by source session (memory/facts.ts). */

import type { EntryCandidates } from "../context/store-base.js";
import type { Fact, FactStatus } from "../contract/facts.js";
import type { QueryTerm } from "../search/query.js";
import { termCounter } from "../search/score.js";
import { type TextTerms, textTerms } from "../search/text-terms.js";
import { type FactFilter, factSearchText } from "../store/facts.js";

/** A fact as the memory store keeps it. */
export interface Kept {
  seq: number;
  /** Its scope's key (where it is held). */
  key: string;
  fact: Fact;
  /** Its words for search, made by the first search that reads it (its text never changes). */
  terms?: TextTerms;
  /** Its vector on a store with an embedder (null: it gets none; absent: not embedded yet). */
  vector?: Float32Array | null;
}

/** A copy of a fact a caller may change. */
export function copy(fact: Fact): Fact {
  return { ...fact, sources: fact.sources.map((s) => ({ ...s })) };
}

/** Whether a kept fact passes a read's filter (`sources`: the filter's message ids). */
export function passes(kept: Kept, filter: FactFilter, sources: Set<string> | undefined): boolean {
  if (!filter.status.includes(kept.fact.status)) return false;
  const session = filter.sourceSession;
  if (sources === undefined && session === undefined) return true;
  return kept.fact.sources.some(
    (s) =>
      (session === undefined || s.sessionId === session) &&
      (sources === undefined || sources.has(s.messageId)),
  );
}

/**
 * What removed facts had superseded: re-linked to the successor `next` names for the removed fact (store/fact-chains.ts),
 * or current again where it names none.
 */
export function restore(facts: Map<string, Kept>, next: ReadonlyMap<string, string | null>): void {
  for (const kept of facts.values()) {
    const by = kept.fact.supersededBy;
    if (kept.fact.status !== ("superseded" satisfies FactStatus) || by === null || !next.has(by)) continue;
    const successor = next.get(by) ?? null;
    kept.fact.supersededBy = successor;
    if (successor === null) kept.fact.status = "current";
  }
}

/** The facts with a source in each session: what an erasure or a delete of messages reads, not every fact. */
export class FactsBySession<K extends { fact: Fact }> {
  private readonly sessions = new Map<string, Set<K>>();

  /** The facts with a source in the session (a copy: the caller may unlink while it walks). */
  of(sessionId: string): K[] {
    return [...(this.sessions.get(sessionId) ?? [])];
  }

  link(kept: K): void {
    for (const { sessionId } of kept.fact.sources) {
      const set = this.sessions.get(sessionId) ?? new Set<K>();
      set.add(kept);
      this.sessions.set(sessionId, set);
    }
  }

  unlink(sessionId: string, kept: K): void {
    const set = this.sessions.get(sessionId);
    if (set?.delete(kept) && set.size === 0) this.sessions.delete(sessionId);
  }
}

/** Per term, the `rows` (in the order given) passing `filter` that match it, their lengths and the count passing. */
export function candidatesOf(
  rows: readonly Kept[],
  terms: QueryTerm[],
  filter: FactFilter,
): EntryCandidates | undefined {
  const sources = filter.sourcesIn && new Set(filter.sourcesIn);
  const count = termCounter(terms);
  const matches: number[][] = terms.map(() => []);
  const lengths = new Map<number, number>();
  let documents = 0;
  for (const kept of rows) {
    if (!passes(kept, filter, sources)) continue;
    documents++;
    kept.terms ??= textTerms(factSearchText(kept.fact));
    const tf = count(kept.terms);
    if (!tf) continue;
    tf.forEach((n, i) => {
      if (n > 0) matches[i]!.push(kept.seq);
    });
    lengths.set(kept.seq, [...factSearchText(kept.fact)].length);
  }
  return lengths.size === 0 ? undefined : { matches, lengths, documents };
}
