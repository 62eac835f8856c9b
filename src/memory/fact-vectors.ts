/** The memory store's facts' vectors (search/vectors/fact-vectors.ts): a field of each kept fact, scored by brute force. */
import type {
  FactVectorCounts,
  FactVectorRows,
  FactVectorWrite,
  UnembeddedFact,
} from "../search/vectors/fact-vectors.js";
import { dot, TopK } from "../search/vectors/score.js";
import { type FactFilter, factSearchText } from "../store/facts.js";
import { type Kept, passes } from "./fact-rows.js";

/** The vectors of the memory store's facts (each scope's facts by id, the store's own maps). */
export class MemoryFactVectors implements FactVectorRows {
  constructor(private readonly scopes: ReadonlyMap<string, Map<string, Kept>>) {}

  /** Every fact of the scope passing `filter` is scored (memory holds no large stores), best first. */
  nearest(
    scope: string,
    query: Float32Array,
    filter: FactFilter,
    limit: number,
  ): { seq: number; score: number }[] {
    const sources = filter.sourcesIn && new Set(filter.sourcesIn);
    const top = new TopK(limit);
    for (const kept of this.scopes.get(scope)?.values() ?? []) {
      const vector = kept.vector;
      if (vector && vector.length === query.length && passes(kept, filter, sources))
        top.add(kept.seq, dot(vector, query));
    }
    return top.entries();
  }

  /** The facts after `after` without a vector, oldest first, at most `limit`. */
  unembedded(after: number, limit: number): UnembeddedFact[] {
    const out: UnembeddedFact[] = [];
    for (const kept of this.kept()) {
      if (kept.vector === undefined && kept.seq > after)
        out.push({ seq: kept.seq, text: factSearchText(kept.fact) });
    }
    return out.sort((a, b) => a.seq - b.seq).slice(0, limit);
  }

  /** Stores vectors; a fact removed since it was read is in no scope and gets nothing. */
  write(rows: readonly FactVectorWrite[]): void {
    const bySeq = new Map(rows.map((row) => [row.seq, row.vector]));
    for (const kept of this.kept()) {
      const vector = bySeq.get(kept.seq);
      if (vector !== undefined) kept.vector = vector;
    }
  }

  forget(): void {
    for (const kept of this.kept()) delete kept.vector;
  }

  /** Refused texts (a null vector: memory seals nothing) wait again. */
  retry(): void {
    for (const kept of this.kept()) if (kept.vector === null) delete kept.vector;
  }

  /** A fact's vector null is a text the embedder refused (memory seals nothing; a fact's text is never empty). */
  counts(): FactVectorCounts {
    const counts = { embedded: 0, pending: 0, failed: 0 };
    for (const kept of this.kept()) {
      if (kept.vector === undefined) counts.pending++;
      else if (kept.vector === null) counts.failed++;
      else counts.embedded++;
    }
    return counts;
  }

  private *kept(): Iterable<Kept> {
    for (const scope of this.scopes.values()) yield* scope.values();
  }
}
