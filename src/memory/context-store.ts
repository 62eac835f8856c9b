import { sameRecord } from "../context/records.js";
import { type EntryCandidates, StoreBlocks, StoreEntries } from "../context/store-base.js";
import type { ContextRecord, EntryHit } from "../contract/context.js";
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import { termFrequencies } from "../search/score.js";
import { type TextTerms, textTerms } from "../search/text-terms.js";
import { entryText } from "../search/tokens.js";
import { compareUtf8 } from "../store/transfer/stream.js";

/** Context-block rows held in process memory. */
export class MemoryBlockStore extends StoreBlocks {
  private readonly rows = new Map<string, string>();
  /** Whose each recorded block is (contract/context.ts ContextRecord); an unrecorded key has none. */
  private readonly records = new Map<string, ContextRecord>();

  /**
   * @internal drops these keys at once (an erasure of `sessionId`), and every block recorded for that session; a
   * listed key recorded for another session or an owner stays. How many were stored.
   */
  dropKeys(keys: readonly string[], sessionId?: string): number {
    const own = sessionId === undefined ? undefined : { sessionId };
    let dropped = 0;
    for (const key of keys) {
      const record = this.records.get(key);
      if (record !== undefined && !(own && sameRecord(record, own))) continue;
      if (this.rows.delete(key)) dropped++;
      this.records.delete(key);
    }
    if (own) dropped += this.dropRecorded(own);
    return dropped;
  }

  /** The record of a key, if any. */
  recordOf(key: string): ContextRecord | undefined {
    return this.records.get(key);
  }

  /** `assertOpen` throws once the owning store is closed; `entries` are removed with the blocks by record. */
  constructor(
    private readonly open: () => void = () => {},
    private readonly entries?: MemoryEntryStore,
  ) {
    super();
  }

  private keep(key: string, record: ContextRecord | undefined): void {
    if (record !== undefined && !this.records.has(key)) this.records.set(key, record);
  }

  private dropRecorded(record: ContextRecord): number {
    let dropped = 0;
    for (const [key, stored] of this.records) {
      if (!sameRecord(stored, record)) continue;
      this.records.delete(key);
      if (this.rows.delete(key)) dropped++;
    }
    return dropped;
  }

  protected async readRecordedKeys(record: ContextRecord): Promise<string[]> {
    const keys = [...this.records].filter(([, stored]) => sameRecord(stored, record)).map(([key]) => key);
    return keys.sort(compareUtf8);
  }

  protected async writeDeleteRecorded(record: ContextRecord): Promise<{ blocks: number; entries: number }> {
    return { blocks: this.dropRecorded(record), entries: this.entries?.dropRecorded(record) ?? 0 };
  }

  protected assertOpen(): void {
    this.open();
  }

  protected async readBlock(key: string): Promise<string | null> {
    return this.rows.get(key) ?? null;
  }

  protected async writeBlock(key: string, content: string, record?: ContextRecord): Promise<void> {
    this.rows.set(key, content);
    this.keep(key, record);
  }

  protected async writeBlockIf(
    key: string,
    expected: string | null,
    next: string,
    record?: ContextRecord,
  ): Promise<boolean> {
    // No await between the comparison and the write: nothing else runs in between.
    if ((this.rows.get(key) ?? null) !== expected) return false;
    this.rows.set(key, next);
    this.keep(key, record);
    return true;
  }

  protected async writeDeleteBlocks(keys: string[]): Promise<void> {
    for (const key of keys) {
      this.rows.delete(key);
      this.records.delete(key);
    }
  }

  /** Every stored key (for tools that list blocks). */
  keys(): string[] {
    this.open();
    return [...this.rows.keys()];
  }
}

/** One stored entry; `terms` are its words for search, made by the first search that reads this version. */
interface MemoryEntry {
  content: string;
  seq: number;
  /** Its length in ranked recall: key and content in characters (code points), as SQLite's and Postgres's `length()`. */
  chars: number;
  terms?: TextTerms;
  /** Whose it is (contract/context.ts ContextRecord), kept from its first recorded write. */
  record?: ContextRecord;
}

// Code points, not UTF-16 units: what the SQL backends' length() counts.
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Searchable entries held in process memory, scored with the shared query language. */
export class MemoryEntryStore extends StoreEntries {
  private readonly labels = new Map<string, Map<string, MemoryEntry>>();
  private seq = 0;

  /** `assertOpen` throws once the owning store is closed. */
  constructor(
    limits: QueryLimits = DEFAULT_QUERY_LIMITS,
    private readonly open: () => void = () => {},
  ) {
    super(limits);
  }

  protected assertOpen(): void {
    this.open();
  }

  protected async writeEntry(
    label: string,
    key: string,
    content: string,
    record?: ContextRecord,
  ): Promise<void> {
    let entries = this.labels.get(label);
    if (!entries) {
      entries = new Map();
      this.labels.set(label, entries);
    }
    const chars = codePoints(key) + codePoints(content);
    const old = entries.get(key);
    const kept = old?.record ?? record;
    entries.set(key, { content, seq: old?.seq ?? ++this.seq, chars, ...(kept ? { record: kept } : {}) });
  }

  /** @internal drops every entry recorded so (an erasure); how many there were. */
  dropRecorded(record: ContextRecord): number {
    let dropped = 0;
    for (const [label, entries] of this.labels) {
      for (const [key, entry] of entries) {
        if (entry.record === undefined || !sameRecord(entry.record, record)) continue;
        entries.delete(key);
        dropped++;
      }
      if (entries.size === 0) this.labels.delete(label);
    }
    return dropped;
  }

  /**
   * @internal drops the entries of `label` (an erasure of `sessionId`), except those recorded for another session
   * or an owner; how many there were.
   */
  dropLabel(label: string, sessionId?: string): number {
    const entries = this.labels.get(label);
    if (!entries) return 0;
    let dropped = 0;
    for (const [key, entry] of entries) {
      const own = sessionId !== undefined && entry.record && sameRecord(entry.record, { sessionId });
      if (entry.record !== undefined && !own) continue;
      entries.delete(key);
      dropped++;
    }
    if (entries.size === 0) this.labels.delete(label);
    return dropped;
  }

  // Every entry of the label is read (they are in memory already): no cap.
  protected async readCandidates(label: string, terms: QueryTerm[]): Promise<EntryCandidates> {
    const entries = this.labels.get(label) ?? new Map<string, MemoryEntry>();
    const matches: number[][] = terms.map(() => []);
    const lengths = new Map<number, number>();
    for (const [key, entry] of entries) {
      // Words made once per version of the entry (a write replaces the object), not at every search.
      entry.terms ??= textTerms(entryText(key, entry.content));
      const { tf } = termFrequencies(terms, entry.terms);
      tf.forEach((n, i) => {
        if (n > 0) matches[i]!.push(entry.seq);
      });
      lengths.set(entry.seq, entry.chars);
    }
    return { matches, lengths, documents: entries.size };
  }

  protected async readEntries(label: string, seqs: number[]): Promise<Map<number, EntryHit>> {
    const wanted = new Set(seqs);
    const hits = new Map<number, EntryHit>();
    for (const [key, entry] of this.labels.get(label) ?? []) {
      if (wanted.has(entry.seq)) hits.set(entry.seq, { key, content: entry.content });
    }
    return hits;
  }

  protected async readCount(label: string): Promise<number> {
    return this.labels.get(label)?.size ?? 0;
  }

  /** True when `label` holds an entry `key`. */
  has(label: string, key: string): boolean {
    return this.labels.get(label)?.has(key) ?? false;
  }

  /** Every entry as `{ label, key, content }` and its record, in the order they were first written (for export). */
  list(): ({ label: string; key: string; content: string } & Partial<
    Record<"sessionId" | "owner", string>
  >)[] {
    this.open();
    return [...this.labels]
      .flatMap(([label, entries]) => [...entries].map(([key, entry]) => ({ label, key, entry })))
      .sort((a, b) => a.entry.seq - b.entry.seq)
      .map(({ label, key, entry }) => ({ label, key, content: entry.content, ...entry.record }));
  }

  protected async writeDeleteEntries(label: string): Promise<void> {
    this.labels.delete(label);
  }
}
