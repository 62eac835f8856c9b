/**
 * The candidates of a ranked-recall search on SQLite, by dense slot: each term's matches, the candidates' parents,
 * sessions and lengths (one statement), and their BM25 weights, ready for rankDense (search/recall.ts). One map
 * from seq to slot serves every step: maps and sets per step were most of a common word's ranking time, and of
 * its garbage.
 */
import {
  addTermWeight,
  bm25Weight,
  type DenseCandidates,
  denseCandidates,
  type RankedCandidate,
  rankDense,
  termRarity,
} from "../../search/recall.js";
import type { SqlDriver } from "../connection/driver.js";
import type { ScoreLookup } from "./hits.js";

// The candidates' parents, sessions and lengths as one JSON array of numbers, four per candidate: a row each cost
// ~0.6 µs (a LoCoMo question reads ~400), and the rows' arrays were most of the search's garbage. Read from the
// covering index (schema.ts, version 9), which the planner would pass over for the table's own key.
const NODES = `SELECT '[' || group_concat(m.seq || ',' || IFNULL(m.parent_seq, 'null') || ',' || m.session_num || ','
    || m.tokens) || ']'
  FROM json_each(?) j JOIN agent_messages m INDEXED BY agent_messages_node ON m.seq = j.value`;

/** A ranking and each ranked candidate's score by seq. */
export interface CandidateRanking {
  ranked: RankedCandidate[];
  scores: ScoreLookup;
}

/** The matched messages of one search, each in one slot. */
export class Candidates {
  private readonly slots = new Map<number, number>();
  private readonly seqs: number[] = [];
  /** Each term's matches as slots. */
  private readonly termSlots: Int32Array[];
  // Per slot; NaN where the message is not stored (deleted since it was indexed).
  private readonly parentSeq: Float64Array;
  private readonly session: Float64Array;
  private readonly tokens: Float64Array;

  /** Slots for each term's matching seqs (`matches[t]`: term t's). */
  constructor(matches: readonly (readonly number[])[]) {
    this.termSlots = matches.map((seqs) => {
      const slots = new Int32Array(seqs.length);
      seqs.forEach((seq, k) => {
        let slot = this.slots.get(seq);
        if (slot === undefined) {
          slot = this.seqs.length;
          this.slots.set(seq, slot);
          this.seqs.push(seq);
        }
        slots[k] = slot;
      });
      return slots;
    });
    const size = this.seqs.length;
    this.parentSeq = new Float64Array(size).fill(Number.NaN);
    this.session = new Float64Array(size).fill(Number.NaN);
    this.tokens = new Float64Array(size).fill(Number.NaN);
  }

  get size(): number {
    return this.seqs.length;
  }

  /** Reads the stored candidates' parents, sessions and lengths. */
  readNodes(driver: SqlDriver): void {
    const [json] = driver.column<string | null>(NODES, [JSON.stringify(this.seqs)]);
    const flat = json ? (JSON.parse(json) as (number | null)[]) : [];
    for (let k = 0; k < flat.length; k += 4) {
      const slot = this.slots.get(flat[k] as number);
      if (slot === undefined) continue;
      this.parentSeq[slot] = flat[k + 1] ?? -1;
      this.session[slot] = flat[k + 2] as number;
      this.tokens[slot] = flat[k + 3] as number;
    }
  }

  /** The session of a stored candidate, else undefined. */
  sessionOf(seq: number): number | undefined {
    const slot = this.slots.get(seq);
    const num = slot === undefined ? Number.NaN : this.session[slot]!;
    return Number.isNaN(num) ? undefined : num;
  }

  /** The sessions the stored candidates belong to. */
  sessions(): Set<number> {
    const nums = new Set<number>();
    for (const num of this.session) if (!Number.isNaN(num)) nums.add(num);
    return nums;
  }

  /**
   * Ranks the stored candidates `visible` lets through, weighed as `weighMatches` (search/recall.ts) weighs: each
   * term by its rarity among `documents` (its match count, stored or not), a message's length by its token estimate
   * against the candidates' average, a term once per message (the index is read for its doclists only).
   */
  rank(documents: number, visible?: (seq: number) => boolean): CandidateRanking {
    const size = this.seqs.length;
    let total = 0;
    let count = 0;
    for (let slot = 0; slot < size; slot++) {
      const length = this.tokens[slot]!;
      if (Number.isNaN(length)) continue;
      total += length;
      count++;
    }
    const average = count === 0 ? 1 : total / count;
    // Dense indices of the candidates that take part (stored, visible), in order of first match; -1 for the rest.
    const dense = denseCandidates(count);
    const denseOf = new Int32Array(size).fill(-1);
    for (let slot = 0; slot < size; slot++) {
      const seq = this.seqs[slot]!;
      if (Number.isNaN(this.tokens[slot]!) || (visible !== undefined && !visible(seq))) continue;
      denseOf[slot] = dense.n;
      dense.seqs[dense.n++] = seq;
    }
    this.termSlots.forEach((slots, term) => {
      const rarity = termRarity(documents, slots.length);
      for (const slot of slots) {
        const i = denseOf[slot]!;
        if (i >= 0) addTermWeight(dense, i, term, bm25Weight(rarity, 1, this.tokens[slot]!, average));
      }
    });
    for (let slot = 0; slot < size; slot++) {
      const i = denseOf[slot]!;
      if (i < 0) continue;
      const parent = this.slots.get(this.parentSeq[slot]!);
      dense.parent[i] = parent === undefined ? -1 : denseOf[parent]!;
    }
    return { ranked: rankDense(dense), scores: this.scoresOf(dense, denseOf) };
  }

  private scoresOf(dense: DenseCandidates, denseOf: Int32Array): ScoreLookup {
    return {
      get: (seq) => {
        const slot = this.slots.get(seq);
        const i = slot === undefined ? -1 : denseOf[slot]!;
        return i < 0 ? undefined : dense.score[i];
      },
    };
  }
}
