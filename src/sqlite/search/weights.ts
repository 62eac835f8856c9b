/**
 * The candidates of a ranked-recall search on SQLite, by dense slot: each term's matches with their parents,
 * sessions and lengths (read with the term, candidates.ts), and their BM25 weights, ready for rankDense
 * (search/rank.ts). One map from seq to slot serves every step: maps and sets per step were most of a common
 * word's ranking time, and of its garbage.
 */
import {
  addTermWeight,
  bm25Weight,
  type DenseCandidates,
  denseCandidates,
  type RankedCandidate,
  rankDense,
  termRarity,
} from "../../search/rank.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import type { ScoreLookup } from "../../sql/search/sqlite-page.js";
import { textParents } from "../../sql/search/sqlite-text-parents.js";

/**
 * A term's matches with their nodes, flat: seq, parent seq (null for a root), session number and token estimate,
 * four numbers per match. A row each cost ~0.6 µs (a LoCoMo question reads ~400), and the rows' arrays were most
 * of the search's garbage.
 */
export type MatchNodes = (number | null)[];
export const NODE_FIELDS = 4;

/**
 * The select list that returns rows of the messages `m` as MatchNodes in one JSON value (`seq`: the expression of
 * each row's seq). `m` is read from the covering index (schema.ts, version 9), which the planner would pass over
 * for the table's own key.
 */
export function matchNodesJson(seq: string): string {
  return `'[' || group_concat(${seq} || ',' || IFNULL(m.parent_seq, 'null') || ',' || m.session_num || ',' || m.tokens)
    || ']'`;
}

const NODES = `SELECT ${matchNodesJson("m.seq")}
  FROM json_each(?) j JOIN agent_messages m INDEXED BY agent_messages_node ON m.seq = j.value`;

/** The nodes of the stored messages among `seqs`, in no particular order. */
export function readNodes(driver: SqlDriver, seqs: readonly number[]): MatchNodes {
  const [json] = driver.column<string | null>(NODES, [JSON.stringify(seqs)]);
  return json ? (JSON.parse(json) as MatchNodes) : [];
}

/** The sessions of each term's matches, in order of first match (as Candidates.sessions lists them). */
export function matchSessions(matches: readonly MatchNodes[]): Set<number> {
  const nums = new Set<number>();
  for (const nodes of matches)
    for (let k = 2; k < nodes.length; k += NODE_FIELDS) nums.add(nodes[k] as number);
  return nums;
}

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
  // Per slot (a message that is no longer stored is no candidate: the term reads drop it).
  private readonly parentSeq: Float64Array;
  private readonly session: Float64Array;
  private readonly tokens: Float64Array;

  /** Slots for each term's matches (`matches[t]`: term t's, with their nodes). */
  constructor(matches: readonly MatchNodes[]) {
    let most = 0;
    for (const nodes of matches) most += nodes.length / NODE_FIELDS;
    this.parentSeq = new Float64Array(most);
    this.session = new Float64Array(most);
    this.tokens = new Float64Array(most);
    this.termSlots = matches.map((nodes) => {
      const slots = new Int32Array(nodes.length / NODE_FIELDS);
      for (let k = 0, m = 0; k < nodes.length; k += NODE_FIELDS, m++) {
        const seq = nodes[k] as number;
        let slot = this.slots.get(seq);
        if (slot === undefined) {
          slot = this.seqs.length;
          this.slots.set(seq, slot);
          this.seqs.push(seq);
          this.parentSeq[slot] = nodes[k + 1] ?? -1;
          this.session[slot] = nodes[k + 2] as number;
          this.tokens[slot] = nodes[k + 3] as number;
        }
        slots[m] = slot;
      }
      return slots;
    });
  }

  /**
   * Links each candidate whose parent is no candidate and has no searchable text to its nearest ancestor with text
   * (text-parents.ts), so the exchange and the neighbours' weight pass through an agent's tool steps.
   */
  passTextless(driver: SqlDriver, watermark: number): void {
    const parents = new Set<number>();
    for (let slot = 0; slot < this.seqs.length; slot++) {
      const parent = this.parentSeq[slot]!;
      if (parent >= 0 && !this.slots.has(parent)) parents.add(parent);
    }
    const above = textParents(driver, [...parents], watermark);
    if (above.size === 0) return;
    for (let slot = 0; slot < this.seqs.length; slot++) {
      const parent = above.get(this.parentSeq[slot]!);
      if (parent !== undefined) this.parentSeq[slot] = parent;
    }
  }

  get size(): number {
    return this.seqs.length;
  }

  /** The session of a candidate, else undefined. */
  sessionOf(seq: number): number | undefined {
    const slot = this.slots.get(seq);
    return slot === undefined ? undefined : this.session[slot];
  }

  /** Each candidate's seq and session. */
  *entries(): IterableIterator<[seq: number, session: number]> {
    for (let slot = 0; slot < this.seqs.length; slot++) yield [this.seqs[slot]!, this.session[slot]!];
  }

  /** The sessions the candidates belong to. */
  sessions(): Set<number> {
    const nums = new Set<number>();
    for (let slot = 0; slot < this.seqs.length; slot++) nums.add(this.session[slot]!);
    return nums;
  }

  /**
   * Ranks the candidates `visible` lets through, weighed as `weighMatches` (search/rank.ts) weighs: each term by
   * its rarity among `documents` (its visible match count), a message's length by its token estimate against the
   * visible candidates' average, a term once per message (the index is read for its doclists only); only the first `top`
   * are ranked in order and returned (scores are kept for all). The first `lifts` terms are the query's time (rank.ts).
   */
  rank(documents: number, visible?: (seq: number) => boolean, top?: number, lifts = 0): CandidateRanking {
    const size = this.seqs.length;
    // Dense indices of the candidates that take part (visible), in order of first match; -1 for the rest.
    const dense = denseCandidates(size, lifts);
    const denseOf = new Int32Array(size).fill(-1);
    let total = 0;
    for (let slot = 0; slot < size; slot++) {
      const seq = this.seqs[slot]!;
      if (visible !== undefined && !visible(seq)) continue;
      denseOf[slot] = dense.n;
      dense.seqs[dense.n++] = seq;
      total += this.tokens[slot]!;
    }
    // A candidate that takes no part (another branch, another session) weighs nothing: not in a term's match
    // count, nor in the average length.
    const average = dense.n === 0 ? 1 : total / dense.n;
    this.termSlots.forEach((slots, term) => {
      let matching = 0;
      for (const slot of slots) if (denseOf[slot]! >= 0) matching++;
      const rarity = termRarity(documents, matching);
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
    return { ranked: rankDense(dense, undefined, top), scores: this.scoresOf(dense, denseOf) };
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
