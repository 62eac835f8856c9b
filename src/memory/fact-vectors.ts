/** The memory store's facts' vectors (search/vectors/fact-vectors.ts): a field of each kept fact, scored by brute force. */
import type { FactVectorWrite, UnembeddedFact } from "../search/vectors/fact-vectors.js";
import { dot, TopK } from "../search/vectors/score.js";
import { type FactFilter, factSearchText } from "../store/facts.js";
import { type Kept, passes } from "./fact-rows.js";

/** The facts of one scope passing `filter` nearest to `query`, best first, at most `limit`. */
export function nearestOf(
  facts: Iterable<Kept>,
  query: Float32Array,
  filter: FactFilter,
  limit: number,
): { seq: number; score: number }[] {
  const sources = filter.sourcesIn && new Set(filter.sourcesIn);
  const top = new TopK(limit);
  for (const kept of facts) {
    const vector = kept.vector;
    if (vector && vector.length === query.length && passes(kept, filter, sources))
      top.add(kept.seq, dot(vector, query));
  }
  return top.entries();
}

/** The facts after `after` without a vector, oldest first, at most `limit`. */
export function unembeddedOf(
  scopes: Iterable<Map<string, Kept>>,
  after: number,
  limit: number,
): UnembeddedFact[] {
  const out: UnembeddedFact[] = [];
  for (const scope of scopes) {
    for (const kept of scope.values()) {
      if (kept.vector === undefined && kept.seq > after)
        out.push({ seq: kept.seq, text: factSearchText(kept.fact) });
    }
  }
  return out.sort((a, b) => a.seq - b.seq).slice(0, limit);
}

/** Stores vectors; a fact removed since it was read is in no scope and gets nothing. */
export function writeVectorsTo(scopes: Iterable<Map<string, Kept>>, rows: readonly FactVectorWrite[]): void {
  const bySeq = new Map(rows.map((row) => [row.seq, row.vector]));
  for (const scope of scopes) {
    for (const kept of scope.values()) {
      const vector = bySeq.get(kept.seq);
      if (vector !== undefined) kept.vector = vector;
    }
  }
}
