/**
 * Facts in the vector channel (docs/FACTS.md#recall, docs/RECALL.md "Where the vectors live"): what a fact store
 * gives the channel of a store with an `embedder`. A fact's vector lives in its own row (a column of the fact), so
 * it goes with the fact on every removal path; a fact of an owner with a key gets none (its text is sealed).
 */

/** A stored fact without a vector yet: its search text (about and text), "" for one that gets none (sealed). */
export interface UnembeddedFact {
  seq: number;
  text: string;
}

/** A fact's vector to store: null for none (a sealed fact, an empty text, a text the embedder refused). */
export interface FactVectorWrite {
  seq: number;
  vector: Float32Array | null;
}

/** What the vector channel asks of a store's facts. */
export interface FactVectorSource {
  /** At most `limit` facts after seq `after` without a vector (nor a recorded "none"), oldest first. */
  unembedded(after: number, limit: number): Promise<UnembeddedFact[]>;
  /** Stores the facts' vectors (a fact removed meanwhile gets none: the write finds no row). */
  writeVectors(rows: readonly FactVectorWrite[]): Promise<void>;
  /** Forgets every fact vector (the channel's reset): every fact is to embed again. */
  forgetVectors(): Promise<void>;
}

/** How many facts the vector read of one scope scores, newest first: a scope's facts, bounded. */
export const FACT_VECTOR_SCAN = 5_000;
