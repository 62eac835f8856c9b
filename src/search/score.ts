/**
 * In-memory scoring with the query language's semantics: what the memory backend searches with, and how SQLite
 * matches rows its read-only connection could not index.
 */
import type { QueryTerm, QueryWord } from "./query.js";
import { type TextTerms, textTerms } from "./text-terms.js";
import { foldToken } from "./tokens.js";

/**
 * Scores `text` (or its words, made once: text-terms.ts) against the terms in memory (0 = no match); the same
 * semantics as the FTS5 expression.
 */
export function scoreText(terms: QueryTerm[], text: string | TextTerms): number {
  if (terms.length === 0) return 0;
  const folded = foldTerms(terms);
  // A word of marks alone folds to nothing: the engines' tokenizers drop it, so it matches nothing here either.
  if (folded.some((words) => words.includes(""))) return 0;
  // A token of marks alone is no word (not a gap in a phrase either), as in every engine's index.
  const words = typeof text === "string" ? textTerms(text) : text;
  let score = 0;
  for (const [i, term] of terms.entries()) {
    const hits = countTerm(words, folded[i]!, term);
    if (hits === 0) return 0;
    score += hits;
  }
  return score;
}

/**
 * The strict search (`match: "all"`) over texts matched in memory: those every term matches (scoreText), most
 * occurrences first, then newest (highest seq) first. The memory backend's search, and SQLite's rows its read-only
 * connection could not index.
 */
export function rankAllWords<T>(
  items: Iterable<T>,
  terms: QueryTerm[],
  textOf: (item: T) => string | TextTerms,
  seqOf: (item: T) => number,
): { item: T; score: number }[] {
  const hits: { item: T; score: number; seq: number }[] = [];
  for (const item of items) {
    const score = scoreText(terms, textOf(item));
    if (score > 0) hits.push({ item, score, seq: seqOf(item) });
  }
  return hits.sort((a, b) => b.score - a.score || b.seq - a.seq);
}

// Each term's folded words (a word: its prefix, or itself), per parsed query: folded once per message, a
// 2,000-character word took seconds over a few thousand messages.
const folds = new WeakMap<QueryTerm[], string[][]>();

function foldTerms(terms: QueryTerm[]): string[][] {
  let folded = folds.get(terms);
  if (folded === undefined) {
    folded = terms.map((term) =>
      term.kind === "phrase" ? term.words.map(foldToken) : [foldToken(term.prefix ?? term.word)],
    );
    folds.set(terms, folded);
  }
  return folded;
}

function countTerm(text: TextTerms, folded: string[], term: QueryTerm): number {
  return term.kind === "phrase" ? countPhrase(text, folded) : countWord(text, folded[0]!, term);
}

// Each distinct word is compared once and counts its occurrences.
function countWord(text: TextTerms, folded: string, term: QueryWord): number {
  let hits = 0;
  const { words, counts } = text;
  for (let k = 0; k < words.length; k++) {
    if (wordMatches(words[k]!, folded, term)) hits += counts[k]!;
  }
  return hits;
}

/** Whether a text's word is one the query word finds: itself or its prefix's family, or one of its forms. */
function wordMatches(word: string, folded: string, term: QueryWord): boolean {
  return (
    (term.prefix === null ? word === folded : word.startsWith(folded)) || term.forms?.includes(word) === true
  );
}

function countPhrase(text: TextTerms, words: string[]): number {
  const ids = words.map((word) => text.words.indexOf(word));
  if (ids.includes(-1)) return 0;
  const { sequence } = text;
  let hits = 0;
  for (let i = 0; i + ids.length <= sequence.length; i++) {
    let j = 0;
    while (j < ids.length && sequence[i + j] === ids[j]) j++;
    if (j === ids.length) hits++;
  }
  return hits;
}

/**
 * How often each term occurs in `text` or its words (a phrase: its occurrences in order) and how many words the
 * text has: the inputs of a BM25 weight, with the query language's own matching.
 */
export function termFrequencies(
  terms: QueryTerm[],
  text: string | TextTerms,
): { tf: number[]; length: number } {
  const folded = foldTerms(terms);
  const words = typeof text === "string" ? textTerms(text) : text;
  const tf = terms.map((term, i) => (folded[i]!.includes("") ? 0 : countTerm(words, folded[i]!, term)));
  return { tf, length: words.sequence.length };
}

const NO_TERMS: readonly number[] = Object.freeze([]);

/**
 * {@link termFrequencies}' `tf` for many texts against one query: each distinct word of the texts is compared with
 * the query's words once (remembered for the counter's life, one search), not once per text and word of the query:
 * 32 query words over 100,000 messages were ~50 million comparisons, seconds of a blocked event loop. Undefined
 * for a text no term matches (most texts of a search), so those cost no array.
 */
export function termCounter(terms: QueryTerm[]): (text: TextTerms) => number[] | undefined {
  const folded = foldTerms(terms);
  const live = terms.map((_, i) => !folded[i]!.includes(""));
  const words = terms.flatMap((term, i) => (term.kind === "word" && live[i] ? [i] : []));
  const phrases = terms.flatMap((term, i) => (term.kind === "phrase" && live[i] ? [i] : []));
  const found = new Map<string, readonly number[]>();
  const termsOf = (word: string): readonly number[] => {
    let of = found.get(word);
    if (of === undefined) {
      of = words.filter((i) => wordMatches(word, folded[i]![0]!, terms[i] as QueryWord));
      if (of.length === 0) of = NO_TERMS;
      found.set(word, of);
    }
    return of;
  };
  return (text) => {
    let tf: number[] | undefined;
    for (let k = 0; k < text.words.length; k++) {
      for (const i of termsOf(text.words[k]!)) {
        tf ??= new Array<number>(terms.length).fill(0);
        tf[i]! += text.counts[k]!;
      }
    }
    for (const i of phrases) {
      const n = countPhrase(text, folded[i]!);
      if (n === 0) continue;
      tf ??= new Array<number>(terms.length).fill(0);
      tf[i] = n;
    }
    return tf;
  };
}
