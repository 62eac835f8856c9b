/**
 * The context stores every backend of this package runs (blocks, and the searchable entries of search blocks), as
 * `StoreProvider` runs message writes: each public method validates its input once, answers a key no row can
 * have without asking the backend (null, 0 or nothing, see isLookupKey), checks the store is open and calls one
 * primitive; the entry search parses and ranks here, over the candidates a backend reads. A backend implements
 * only the primitives. Here rather than in `store/`: the ranking lives in `search/`, which builds on `store/`.
 */

import type { BlockStore, ContextRecord, EntryHit, EntryStore } from "../contract/context.js";
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import { perTermCap, rankEntries, recallTerms } from "../search/rank.js";
import {
  assertBlockKey,
  assertContent,
  assertStoredKey,
  isBlockKey,
  isLookupKey,
  lookupKeys,
} from "../store/keys.js";
import { SEARCH_CANDIDATES, searchLimit } from "../store/limits.js";
import { parseRecord } from "./records.js";

/** The base of this package's block stores (see the module comment). */
export abstract class StoreBlocks implements BlockStore {
  /** Throws `CLOSED` once the store is closed (a backend whose every statement refuses by then does nothing). */
  protected abstract assertOpen(): void;
  /** The content of a lookup-able key, or null. */
  protected abstract readBlock(key: string): Promise<string | null>;
  /**
   * Inserts or replaces a validated block. `record`: whose it is, stored when the row is new or has none (a
   * recorded row keeps its record).
   */
  protected abstract writeBlock(
    key: string,
    content: string,
    record: ContextRecord | undefined,
  ): Promise<void>;
  /**
   * Writes a validated block only when its stored content is `expected` (null: no row), atomically with the
   * comparison; true when it wrote. `record` as in writeBlock.
   */
  protected abstract writeBlockIf(
    key: string,
    expected: string | null,
    next: string,
    record: ContextRecord | undefined,
  ): Promise<boolean>;
  /** Deletes the blocks of lookup-able keys (at least one). */
  protected abstract writeDeleteBlocks(keys: string[]): Promise<void>;
  /** The keys of the blocks recorded so, in UTF-8 byte order. */
  protected abstract readRecordedKeys(record: ContextRecord): Promise<string[]>;
  /** Deletes the blocks and entries recorded so; how many of each. */
  protected abstract writeDeleteRecorded(record: ContextRecord): Promise<{ blocks: number; entries: number }>;

  async getBlock(key: string): Promise<string | null> {
    if (!isBlockKey(key)) return null;
    this.assertOpen();
    return this.readBlock(key);
  }

  async setBlock(key: string, content: string, record?: ContextRecord): Promise<void> {
    assertBlockKey(key);
    assertContent(content);
    const owner = parseRecord(record);
    this.assertOpen();
    await this.writeBlock(key, content, owner);
  }

  async setBlockIf(
    key: string,
    expected: string | null,
    next: string,
    record?: ContextRecord,
  ): Promise<boolean> {
    assertBlockKey(key);
    if (expected !== null) assertContent(expected, "expected");
    assertContent(next);
    const owner = parseRecord(record);
    this.assertOpen();
    return this.writeBlockIf(key, expected, next, owner);
  }

  async recordedKeys(record: ContextRecord): Promise<string[]> {
    const owner = parseRecord(record ?? null) as ContextRecord;
    this.assertOpen();
    return this.readRecordedKeys(owner);
  }

  async deleteRecorded(record: ContextRecord): Promise<{ blocks: number; entries: number }> {
    const owner = parseRecord(record ?? null) as ContextRecord;
    this.assertOpen();
    return this.writeDeleteRecorded(owner);
  }

  async deleteBlocks(keys: readonly string[]): Promise<void> {
    const known = lookupKeys(keys);
    if (known.length === 0) return;
    this.assertOpen();
    await this.writeDeleteBlocks(known);
  }
}

/** What a backend reads for an entry search: per term, its matching entries' seqs, newest first. */
export interface EntryCandidates {
  matches: number[][];
  /** Each candidate's length in characters (key and content, code points). */
  lengths: Map<number, number>;
  /** The number of entries of the label (a term's rarity is measured against it). */
  documents: number;
}

/** The base of this package's entry stores (see the module comment). */
export abstract class StoreEntries implements EntryStore {
  constructor(private readonly limits: QueryLimits = DEFAULT_QUERY_LIMITS) {}

  /** Throws `CLOSED` once the store is closed (a backend whose every statement refuses by then does nothing). */
  protected abstract assertOpen(): void;
  /** Inserts or replaces a validated entry; `record` as a block's (StoreBlocks.writeBlock). */
  protected abstract writeEntry(
    label: string,
    key: string,
    content: string,
    record: ContextRecord | undefined,
  ): Promise<void>;
  /**
   * Each term's newest matches of the label, at most `cap` per term; undefined when no entry matches (a
   * backend may then skip its other reads).
   */
  protected abstract readCandidates(
    label: string,
    terms: QueryTerm[],
    cap: number,
  ): Promise<EntryCandidates | undefined>;
  /** The entries of these seqs (of `label`); a seq deleted meanwhile is left out. */
  protected abstract readEntries(label: string, seqs: number[]): Promise<Map<number, EntryHit>>;
  /** The number of entries of a lookup-able label. */
  protected abstract readCount(label: string): Promise<number>;
  /** Deletes every entry of a lookup-able label. */
  protected abstract writeDeleteEntries(label: string): Promise<void>;

  async setEntry(label: string, key: string, content: string, record?: ContextRecord): Promise<void> {
    assertStoredKey(label, "A label", "label");
    assertStoredKey(key, "An entry key");
    assertContent(content);
    const owner = parseRecord(record);
    this.assertOpen();
    await this.writeEntry(label, key, content, owner);
  }

  async searchEntries(label: string, query: string, limit?: number): Promise<EntryHit[]> {
    const max = searchLimit(limit ?? 10);
    // Parsed (and so bounded) first: a query over the limits is refused even with limit 0. Ranked recall, as
    // message search: any content word makes a candidate, more of them rank first.
    const terms = typeof query === "string" ? recallTerms(query, this.limits) : [];
    if (terms.length === 0 || max === 0 || !isLookupKey(label)) return [];
    this.assertOpen();
    const found = await this.readCandidates(label, terms, perTermCap(terms.length, SEARCH_CANDIDATES));
    if (!found) return [];
    const { matches, lengths, documents } = found;
    const top = rankEntries(matches, (seq) => lengths.get(seq), documents).slice(0, max);
    const hits = await this.readEntries(label, top);
    return top.flatMap((seq) => {
      const hit = hits.get(seq);
      return hit === undefined ? [] : [hit];
    });
  }

  async countEntries(label: string): Promise<number> {
    if (!isLookupKey(label)) return 0;
    this.assertOpen();
    return this.readCount(label);
  }

  async deleteEntries(label: string): Promise<void> {
    if (!isLookupKey(label)) return;
    this.assertOpen();
    await this.writeDeleteEntries(label);
  }
}
