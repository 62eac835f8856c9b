/**
 * Word families read from fts5vocab, kept per SQLite connection and kept current as that connection indexes text,
 * so a search on a large store does not read the same families again after every append.
 */
import type { SqlDriver } from "./driver.js";

/** A family with more index terms than this is left to FTS5's own prefix query. */
export const MAX_FAMILY_TERMS = 32;

/**
 * Families kept per connection; the least recently used goes first. A family is at most 32 terms, mostly short, so
 * the cache stays around a megabyte; an agent's or a search box's working set of words fits (the everyday bench
 * cycles through ~300 roots, which an LRU of 128 never hit).
 */
const MAX_ROOTS = 1024;
/**
 * How far behind the index a kept family may fall, in texts indexed since and their UTF-16 units: catching up
 * searches each text for the root (~0.3 µs per 500 characters with cold caches), so past this, reading the family
 * again (50-120 µs) costs less. Splitting the texts into terms once instead cost ~45 µs per 500 characters.
 */
const MAX_BEHIND_TEXTS = 128;
const MAX_BEHIND_UNITS = 1 << 16;
/** FTS5 cuts a token at its own length limit; a term longer than this is left to the index to tell. */
const MAX_TERM_CHARS = 256;

// A letter, digit, mark or private-use character outside ASCII: FTS5's unicode61 may fold it into an ASCII term
// (`é` → `e`, or keep a variation selector inside a token), which only the index itself can tell.
const NON_ASCII_WORD_CHAR = /(?!\p{ASCII})[\p{L}\p{N}\p{M}\p{Co}]/u;
const NON_ASCII = /[^\p{ASCII}]/u;

/** A text this connection indexed: its ASCII terms in lower case, or null when only the index can tell them. */
interface LoggedText {
  readonly text: string;
  /** The session token of the `sid` column, which fts5vocab lists as well. */
  readonly sid: string;
  /** Units of the texts logged before this one. */
  readonly unitsBefore: number;
  folded?: string | null;
}

/** A word family as the index holds it. */
export interface KeptFamily {
  /** The index terms, sorted; null: more than MAX_FAMILY_TERMS (a prefix query). */
  terms: string[] | null;
  /**
   * At least the number of documents holding one of the terms: the index's counts when read, plus one for each
   * document indexed since with such a term (a deleted or re-indexed document is not taken off).
   */
  docs: number;
}

interface Family extends KeptFamily {
  /** The log position up to which `terms` and `docs` are current. */
  seen: number;
}

/**
 * The families of one connection. A family read from the index stays right as long as every term added to the
 * index since is seen here: this connection's own index writes pass through `noteIndexed` (search-index.ts
 * `indexText`), and a commit by any other connection moves `PRAGMA data_version`, which empties the cache. A term
 * that left the index (a deleted message) may stay listed: it matches nothing, so results are the same. A family
 * that falls too far behind is dropped (MAX_BEHIND_TEXTS), so the log holds at most that much.
 */
export class FamilyCache {
  private readonly families = new Map<string, Family>();
  private log: LoggedText[] = [];
  /** Log position of `log[0]`. */
  private logStart = 0;
  /** Units of every text ever logged (the log's end). */
  private units = 0;
  private version: unknown;

  /** Records a text this connection wrote to the index (nothing to do while no family is kept). */
  noteIndexed(text: string, sid: string): void {
    if (this.families.size === 0) return;
    this.log.push({ text, sid, unitsBefore: this.units });
    this.units += text.length;
    this.dropStale();
  }

  /** Empties the cache when another connection committed since the last check (its writes are not logged here). */
  checkVersion(version: unknown): void {
    if (version === this.version) return;
    this.clear();
    this.version = version;
  }

  /**
   * The family of `root`, brought up to date with the texts indexed since it was read; undefined when it is not
   * kept or only the index can tell.
   */
  get(root: string): KeptFamily | undefined {
    const family = this.families.get(root);
    if (family === undefined) return undefined;
    for (let i = family.seen - this.logStart; i < this.log.length; i++) {
      const entry = this.log[i] as LoggedText;
      if (entry.folded === undefined) entry.folded = foldAscii(`${entry.text} ${entry.sid}`);
      const folded = entry.folded;
      if (folded === null) {
        this.families.delete(root);
        return undefined;
      }
      if (family.terms === null) continue;
      const terms = addTerms(family.terms, folded, root);
      if (terms === undefined) {
        this.families.delete(root);
        return undefined;
      }
      if (terms !== false) family.docs++;
      family.terms = terms === false ? family.terms : terms;
    }
    family.seen = this.logStart + this.log.length;
    // Most recently used last, so eviction takes the oldest.
    this.families.delete(root);
    this.families.set(root, family);
    this.trimLog();
    return family;
  }

  /** Keeps a family just read from the index. */
  set(root: string, { terms, docs }: KeptFamily): void {
    this.families.delete(root);
    if (this.families.size >= MAX_ROOTS) {
      const oldest = this.families.keys().next().value;
      if (oldest !== undefined) this.families.delete(oldest);
    }
    this.families.set(root, { terms, docs, seen: this.logStart + this.log.length });
    this.trimLog();
  }

  private clear(): void {
    this.families.clear();
    this.trimLog();
  }

  // Drops the families too far behind to catch up cheaply: the first ones in the map (see trimLog).
  private dropStale(): void {
    const end = this.logStart + this.log.length;
    for (const [root, family] of this.families) {
      const behind = family.seen - this.logStart;
      const units = behind < this.log.length ? (this.log[behind] as LoggedText).unitsBefore : this.units;
      if (end - family.seen <= MAX_BEHIND_TEXTS && this.units - units <= MAX_BEHIND_UNITS) break;
      this.families.delete(root);
    }
    this.trimLog();
  }

  // Drops the texts every kept family has seen. A family is (re)inserted last with the log's end as `seen`, so
  // the first one in the map has seen the least.
  private trimLog(): void {
    const first = this.families.values().next().value;
    const oldest = first === undefined ? this.logStart + this.log.length : first.seen;
    const drop = oldest - this.logStart;
    if (drop === 0) return;
    this.log = this.log.slice(drop);
    this.logStart = oldest;
  }
}

// The text in lower case, when its terms are runs of ASCII letters and digits as FTS5 makes them; else null.
function foldAscii(text: string): string | null {
  if (NON_ASCII.test(text) && NON_ASCII_WORD_CHAR.test(text)) return null;
  return text.toLowerCase();
}

function isWordCode(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
}

// `terms` with every term of `text` (folded) that starts with `root`, sorted; null past MAX_FAMILY_TERMS; false
// when the text holds no such term; undefined for a term too long to know how FTS5 stored it.
function addTerms(terms: string[], text: string, root: string): string[] | null | false | undefined {
  let result: string[] | false = false;
  for (let at = text.indexOf(root); at !== -1; at = text.indexOf(root, at + 1)) {
    if (at > 0 && isWordCode(text.charCodeAt(at - 1))) continue;
    let end = at + root.length;
    while (end < text.length && isWordCode(text.charCodeAt(end))) end++;
    if (end - at > MAX_TERM_CHARS) return undefined;
    const term = text.slice(at, end);
    const current: string[] = result === false ? terms : result;
    if (current.includes(term)) {
      result = current;
      continue;
    }
    if (current.length === MAX_FAMILY_TERMS) return null;
    result = [...current, term].sort();
  }
  return result;
}

// One cache per engine connection, not per driver: a store wraps its driver for its parts, and two stores over
// one handle write the same index. A driver that does not name its connection gets no cache at all.
const caches = new WeakMap<object, FamilyCache>();

/** The family cache of the connection behind `driver`; undefined when the driver does not name its connection. */
export function familyCacheOf(driver: SqlDriver): FamilyCache | undefined {
  if (driver.handle === undefined) return undefined;
  let cache = caches.get(driver.handle);
  if (cache === undefined) {
    cache = new FamilyCache();
    caches.set(driver.handle, cache);
  }
  return cache;
}

/** Tells the connection's family cache about a row written to the message index (search-index.ts). */
export function noteIndexedText(driver: SqlDriver, text: string, sid: string): void {
  if (driver.handle !== undefined) caches.get(driver.handle)?.noteIndexed(text, sid);
}
