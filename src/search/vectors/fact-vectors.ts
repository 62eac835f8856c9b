/**
 * Facts in the vector channel (docs/FACTS.md#recall, docs/RECALL.md "Where the vectors live"): what a fact store
 * gives the channel of a store with an `embedder`. A fact's vector lives in its own row (a column of the fact), so
 * it goes with the fact on every removal path; a fact of an owner with a key gets none (its text is sealed).
 */
import type { FactFilter } from "../../store/facts.js";

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

/**
 * How a store's facts stand in the vector channel (`status().facts`): `embedded` holds a vector or needs none (a
 * sealed fact), `failed` the embedder refused, `pending` waits for the worker or a backfill.
 */
export interface FactVectorCounts {
  embedded: number;
  pending: number;
  failed: number;
}

/** What the vector channel asks of a store's facts. */
export interface FactVectorSource {
  /** At most `limit` facts after seq `after` without a vector (nor a recorded "none"), oldest first. */
  unembedded(after: number, limit: number): Promise<UnembeddedFact[]>;
  /** Stores the facts' vectors (a fact removed meanwhile gets none: the write finds no row). */
  writeVectors(rows: readonly FactVectorWrite[]): Promise<void>;
  /** Forgets every fact vector (the channel's reset): every fact is to embed again. */
  forgetVectors(): Promise<void>;
  /** The facts whose text the embedder refused wait again (`backfill({ retryFailed: true })`). */
  retryRefused(): Promise<void>;
  /** How the facts stand: vectors held, waiting, refused. */
  vectorCounts(): Promise<FactVectorCounts>;
}

/**
 * A backend's facts' vectors (memory, SQLite, Postgres), kept in the facts' own rows: what the fact store's base
 * reads and writes through, so each backend supplies only these (sync or async).
 */
export interface FactVectorRows {
  /** As {@link FactVectorSource.unembedded}. */
  unembedded(after: number, limit: number): UnembeddedFact[] | Promise<UnembeddedFact[]>;
  /** As {@link FactVectorSource.writeVectors}. */
  write(rows: readonly FactVectorWrite[]): void | Promise<void>;
  /** As {@link FactVectorSource.forgetVectors}. */
  forget(): void | Promise<void>;
  /** As {@link FactVectorSource.retryRefused}: the "none" marker goes from clear facts (a sealed one's stays). */
  retry(): void | Promise<void>;
  /** The facts of scope `scope` (its key) passing `filter` nearest to the unit vector `query`, best first. */
  nearest(
    scope: string,
    query: Float32Array,
    filter: FactFilter,
    limit: number,
  ): { seq: number; score: number }[] | Promise<{ seq: number; score: number }[]>;
  /** As {@link FactVectorSource.vectorCounts}. */
  counts(): FactVectorCounts | Promise<FactVectorCounts>;
}

/** How many facts the vector read of one scope scores, newest first: a scope's facts, bounded. */
export const FACT_VECTOR_SCAN = 5_000;
