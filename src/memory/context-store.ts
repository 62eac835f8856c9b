import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "../search/limits.js";
import { rankEntries, recallTerms } from "../search/rank.js";
import { termFrequencies } from "../search/score.js";
import { type TextTerms, textTerms } from "../search/text-terms.js";
import { entryText } from "../search/tokens.js";
import {
  assertBlockKey,
  assertContent,
  assertStoredKey,
  isBlockKey,
  isLookupKey,
  lookupKeys,
} from "../store/keys.js";
import { searchLimit } from "../store/limits.js";
import type { BlockStore, EntryHit, EntryStore } from "../store/types.js";

/** Context-block rows held in process memory. */
export class MemoryBlockStore implements BlockStore {
  private readonly rows = new Map<string, string>();

  /** `assertOpen` throws once the owning store is closed. */
  constructor(private readonly assertOpen: () => void = () => {}) {}

  async getBlock(key: string): Promise<string | null> {
    this.assertOpen();
    if (!isBlockKey(key)) return null;
    return this.rows.get(key) ?? null;
  }

  async setBlock(key: string, content: string): Promise<void> {
    this.assertOpen();
    assertBlockKey(key);
    assertContent(content);
    this.rows.set(key, content);
  }

  async deleteBlocks(keys: readonly string[]): Promise<void> {
    this.assertOpen();
    for (const key of lookupKeys(keys)) this.rows.delete(key);
  }

  /** Every stored key (for tools that list blocks). */
  keys(): string[] {
    this.assertOpen();
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
export class MemoryEntryStore implements EntryStore {
  private readonly labels = new Map<string, Map<string, MemoryEntry>>();
  private seq = 0;

  /** `assertOpen` throws once the owning store is closed. */
  constructor(
    private readonly limits: QueryLimits = DEFAULT_QUERY_LIMITS,
    private readonly assertOpen: () => void = () => {},
  ) {}

  async setEntry(label: string, key: string, content: string): Promise<void> {
    this.assertOpen();
    assertStoredKey(label, "A label");
    assertStoredKey(key, "An entry key");
    assertContent(content);
    let entries = this.labels.get(label);
    if (!entries) {
      entries = new Map();
      this.labels.set(label, entries);
    }
    const chars = codePoints(key) + codePoints(content);
    entries.set(key, { content, seq: entries.get(key)?.seq ?? ++this.seq, chars });
  }

  async searchEntries(label: string, query: string, limit?: number): Promise<EntryHit[]> {
    this.assertOpen();
    const max = searchLimit(limit ?? 10);
    // Ranked recall, as message search: any content word makes a candidate, more of them rank first.
    const terms = typeof query === "string" ? recallTerms(query, this.limits) : [];
    if (terms.length === 0 || max === 0 || !isLookupKey(label)) return [];
    const entries = [...(this.labels.get(label) ?? [])];
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
    const bySeq = new Map(entries.map(([key, entry]) => [entry.seq, { key, content: entry.content }]));
    return rankEntries(matches, (seq) => lengths.get(seq), entries.length)
      .slice(0, max)
      .map((seq) => bySeq.get(seq)!);
  }

  async countEntries(label: string): Promise<number> {
    this.assertOpen();
    if (!isLookupKey(label)) return 0;
    return this.labels.get(label)?.size ?? 0;
  }

  /** True when `label` holds an entry `key`. */
  has(label: string, key: string): boolean {
    return this.labels.get(label)?.has(key) ?? false;
  }

  /** Every entry as `{ label, key, content }`, in the order they were first written (for transfer export). */
  list(): { label: string; key: string; content: string }[] {
    this.assertOpen();
    return [...this.labels]
      .flatMap(([label, entries]) => [...entries].map(([key, entry]) => ({ label, key, entry })))
      .sort((a, b) => a.entry.seq - b.entry.seq)
      .map(({ label, key, entry }) => ({ label, key, content: entry.content }));
  }

  async deleteEntries(label: string): Promise<void> {
    this.assertOpen();
    this.labels.delete(label);
  }
}
