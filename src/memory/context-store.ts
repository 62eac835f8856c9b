import { type EntryCandidates, StoreBlocks, StoreEntries } from "../context/store-base.js";
import type { EntryHit } from "../contract/context.js";
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import { termFrequencies } from "../search/score.js";
import { type TextTerms, textTerms } from "../search/text-terms.js";
import { entryText } from "../search/tokens.js";

/** Context-block rows held in process memory. */
export class MemoryBlockStore extends StoreBlocks {
  private readonly rows = new Map<string, string>();

  /** @internal drops these keys at once (an erasure); how many were stored. */
  dropKeys(keys: readonly string[]): number {
    let dropped = 0;
    for (const key of keys) if (this.rows.delete(key)) dropped++;
    return dropped;
  }

  /** `assertOpen` throws once the owning store is closed. */
  constructor(private readonly open: () => void = () => {}) {
    super();
  }

  protected assertOpen(): void {
    this.open();
  }

  protected async readBlock(key: string): Promise<string | null> {
    return this.rows.get(key) ?? null;
  }

  protected async writeBlock(key: string, content: string): Promise<void> {
    this.rows.set(key, content);
  }

  protected async writeBlockIf(key: string, expected: string | null, next: string): Promise<boolean> {
    // No await between the comparison and the write: nothing else runs in between.
    if ((this.rows.get(key) ?? null) !== expected) return false;
    this.rows.set(key, next);
    return true;
  }

  protected async writeDeleteBlocks(keys: string[]): Promise<void> {
    for (const key of keys) this.rows.delete(key);
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

  protected async writeEntry(label: string, key: string, content: string): Promise<void> {
    let entries = this.labels.get(label);
    if (!entries) {
      entries = new Map();
      this.labels.set(label, entries);
    }
    const chars = codePoints(key) + codePoints(content);
    entries.set(key, { content, seq: entries.get(key)?.seq ?? ++this.seq, chars });
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

  /** Every entry as `{ label, key, content }`, in the order they were first written (for transfer export). */
  list(): { label: string; key: string; content: string }[] {
    this.open();
    return [...this.labels]
      .flatMap(([label, entries]) => [...entries].map(([key, entry]) => ({ label, key, entry })))
      .sort((a, b) => a.entry.seq - b.entry.seq)
      .map(({ label, key, entry }) => ({ label, key, content: entry.content }));
  }

  /** @internal drops the entries of `label` at once (an erasure); how many there were. */
  dropLabel(label: string): number {
    const size = this.labels.get(label)?.size ?? 0;
    this.labels.delete(label);
    return size;
  }

  protected async writeDeleteEntries(label: string): Promise<void> {
    this.labels.delete(label);
  }
}
