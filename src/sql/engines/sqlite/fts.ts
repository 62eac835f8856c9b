/**
 * The query language rendered for FTS5: the MATCH expression, and word families expanded to the index's own
 * terms (the Postgres twin is src/postgres/search/fts.ts).
 */
import { type BlindTokens, isBlindLike } from "../../../search/blind-tokens.js";
import { otherForms, type QueryTerm, type QueryWord } from "../../../search/query.js";
import { foldToken } from "../../../search/tokens.js";
import type { SqlDriver } from "./driver.js";
import { type FamilyCache, familyCacheOf, MAX_FAMILY_TERMS } from "./family-cache.js";

/**
 * Renders parsed terms as an FTS5 expression on one column; tokens hold only letters and digits, so quoting is safe.
 * `families` may give the index terms a word-family prefix stands for: they are ORed instead of the prefix query.
 * Words are folded as the index text is (`searchableText`); a word whose folding changes it is also matched as
 * typed, so text indexed before the index was folded (where unicode61 kept "αθήνα", "ёжик") is still found.
 * `blinds`: the owners in scope with a key, whose sealed messages the index holds as blind tokens: each term is
 * also matched as each owner's tokens (ORed, so a term's documents are counted as in clear).
 */
export function toFts5(
  terms: QueryTerm[],
  column: string,
  families?: ReadonlyMap<string, readonly string[]>,
  blinds: readonly BlindTokens[] = [],
): string {
  const clear = terms.map((term) => {
    if (term.kind === "phrase") return either(term.words.join(" "), term.words.map(foldToken).join(" "), "");
    const family = term.prefix === null ? undefined : families?.get(term.prefix);
    const forms = otherForms(term);
    if (forms.length > 0) return withForms(term, forms, family);
    if (term.prefix === null) return either(term.word, foldToken(term.word), "");
    if (family && family.length > 0) return `(${family.map(quoted).join(" OR ")})`;
    return either(term.prefix, foldToken(term.prefix), "*");
  });
  const parts =
    blinds.length === 0
      ? clear
      : clear.map((part, i) => `(${[part, ...blinds.map((b) => blindTerm(terms[i]!, b))].join(" OR ")})`);
  // One term takes no parentheses: FTS5 reads `text : "a b"` ~20 % faster than `text : ("a b")` (a phrase or a word
  // at 10,000 messages, 14 against 18 µs p50), and ranked recall asks one term per statement.
  return parts.length === 1 ? `${column} : ${parts[0]}` : `${column} : (${parts.join(" AND ")})`;
}

// A word ORed with its other forms, each exactly: the word itself, or the index's terms of its prefix (its family;
// none when empty), or the prefix query. Words with forms are lower-case ASCII, as the index spells them.
function withForms(term: QueryWord, forms: readonly string[], family: readonly string[] | undefined): string {
  const own =
    term.prefix === null ? [quoted(term.word)] : family ? family.map(quoted) : [`"${term.prefix}"*`];
  return `(${[...own, ...forms.map(quoted)].join(" OR ")})`;
}

// A term as one owner's blind tokens (search/blind-tokens.ts): a phrase its words' tokens in a row, a word its token
// or its family's token prefix, and each of its other forms.
function blindTerm(term: QueryTerm, blind: BlindTokens): string {
  if (term.kind === "phrase") return quoted(term.words.map((word) => blind.word(foldToken(word))).join(" "));
  const prefix = term.prefix === null ? null : blind.prefix(foldToken(term.prefix));
  const own = prefix === null ? quoted(blind.word(foldToken(term.word))) : `${quoted(prefix)}*`;
  const forms = otherForms(term).map((form) => quoted(blind.word(form)));
  return forms.length === 0 ? own : `${own} OR ${forms.join(" OR ")}`;
}

function quoted(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

/**
 * True when no indexed message can match the term: it folds to nothing, or its family has no indexed term and it
 * has no other forms.
 */
export function cannotMatch(term: QueryTerm, families: ReadonlyMap<string, readonly string[]>): boolean {
  if (foldsToNothing([term])) return true;
  // A word spelled as a blind token would match one by its spelling, not its meaning.
  if ((term.kind === "phrase" ? term.words : [term.word]).some((word) => isBlindLike(foldToken(word))))
    return true;
  return (
    term.kind === "word" &&
    term.prefix !== null &&
    families.get(term.prefix)?.length === 0 &&
    otherForms(term).length === 0
  );
}

// A phrase (or prefix, with `*`) as folded, ORed with it as typed when the two differ.
function either(typed: string, folded: string, star: string): string {
  return typed === folded ? `"${folded}"${star}` : `("${folded}"${star} OR "${typed}"${star})`;
}

/** True when a term folds to nothing (marks alone): no indexed text holds it, so the query matches nothing. */
export function foldsToNothing(terms: readonly QueryTerm[]): boolean {
  return terms.some((term) =>
    term.kind === "phrase"
      ? term.words.some((word) => foldToken(word) === "")
      : foldToken(term.prefix ?? term.word) === "",
  );
}

/**
 * Below this many stored messages (the highest `seq`, read in O(1)) prefix queries stay: their doclists are short,
 * and the fts5vocab look-up costs more than it saves (one 10,000-message session: prefix query 240 µs p50 against
 * 320 µs expanded plus ~80 µs for the look-up). From ~100,000 messages on the expansion pays (two-word queries
 * 0.62 against 0.93 ms p50; 1M messages: 8 ms against 43 ms).
 */
export const FAMILY_MIN_ROWS = 50_000;

/** Prefixes spelled like the index spells tokens (lower-case ASCII), so a range of index terms finds them. */
const PLAIN_PREFIX = /^[a-z0-9]+$/;

/**
 * Turns word-family prefixes into the index's own terms. FTS5 answers `"root"*` by merging the doclists of every
 * term with that prefix across the whole store, and bm25 does it a second time to count documents: for a common
 * word that is most of a search's cost (43 ms vs 8 ms exact, scoped to one session of a 1M-message store). The
 * same matches, written as `("term1" OR "term2")`, seek only where they need. The terms come from an fts5vocab
 * table over the index (a temp table of this connection: nothing is stored), and are kept per connection
 * (family-cache.ts: reading a family costs ~50-120 µs, a quarter of a two-word search at 100,000 messages); where
 * no vocabulary table can be made (a `sql` tag, an SQLite without fts5vocab), the prefix query stays.
 */
export class FamilyExpander {
  private available: boolean | undefined;
  private readonly cache: FamilyCache | undefined;

  constructor(
    private readonly driver: SqlDriver,
    private readonly ftsTable: string,
  ) {
    this.cache = familyCacheOf(driver);
  }

  private get vocab(): string {
    return `temp.${this.ftsTable}_vocab`;
  }

  private ready(): boolean {
    if (this.available !== undefined) return this.available;
    this.available = false;
    // A Durable Object's SQL refuses schema it does not know; the prefix query is correct there, only slower.
    if (!this.driver.configurable) return false;
    // better-sqlite3 and node:sqlite build fts5vocab with FTS5. Should an engine lack it, the search that finds
    // out fails with the error, and later searches on this connection use prefix queries.
    this.driver.run(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${this.vocab} USING fts5vocab(main, ${this.ftsTable}, 'row')`,
    );
    this.available = true;
    return true;
  }

  /**
   * The index terms of each word family in `terms` (by prefix); a prefix missing from the map stays a prefix
   * query. An empty list means no indexed word has that prefix: the query cannot match. A store of fewer than
   * FAMILY_MIN_ROWS messages gets no expansion.
   */
  families(terms: readonly QueryTerm[], storeRows = Number.POSITIVE_INFINITY): Map<string, string[]> {
    return this.expand(terms, storeRows).families;
  }

  /**
   * The families (see `families`) and at least how many documents the query can match: every term must match,
   * so no more than the family with the fewest documents holds (Infinity when no family tells).
   */
  expand(terms: readonly QueryTerm[], storeRows = Number.POSITIVE_INFINITY): Expansion {
    const expansion: Expansion = { families: new Map(), maxMatches: Number.POSITIVE_INFINITY };
    if (storeRows < FAMILY_MIN_ROWS) return expansion;
    let checked = false;
    for (const term of terms) {
      const root = term.kind === "word" ? term.prefix : null;
      if (root === null || expansion.families.has(root) || !PLAIN_PREFIX.test(root) || !this.ready())
        continue;
      if (!checked && this.cache) {
        // Another connection's commit may have added terms this connection never saw.
        this.cache.checkVersion(this.driver.column<number>("PRAGMA data_version")[0]);
        checked = true;
      }
      let family = this.cache?.get(root);
      if (family === undefined) {
        const read = this.driver.tuples<[term: string, docs: number]>(
          `SELECT term, doc FROM ${this.vocab} WHERE term >= ? AND term < ? LIMIT ${MAX_FAMILY_TERMS + 1}`,
          [root, prefixUpperBound(root)],
        );
        family =
          read.length <= MAX_FAMILY_TERMS
            ? { terms: read.map(([t]) => t), docs: read.reduce((sum, [, docs]) => sum + docs, 0) }
            : { terms: null, docs: Number.POSITIVE_INFINITY };
        this.cache?.set(root, family);
      }
      if (family.terms === null) continue;
      expansion.families.set(root, family.terms);
      // A word's other forms match beyond its family: the family's count bounds nothing then.
      if (term.kind === "word" && otherForms(term).length === 0)
        expansion.maxMatches = Math.min(expansion.maxMatches, family.docs);
    }
    return expansion;
  }
}

/** Word families as index terms, and a bound on the matches of the query they belong to. */
export interface Expansion {
  families: Map<string, string[]>;
  maxMatches: number;
}

/** No family expanded (every family a prefix query), no bound on the matches. */
export function noExpansion(): Expansion {
  return { families: new Map(), maxMatches: Number.POSITIVE_INFINITY };
}

/**
 * The smallest string above every string starting with `prefix` (its last character, an ASCII letter or digit,
 * incremented): the end of a family's range of index terms.
 */
export function prefixUpperBound(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
