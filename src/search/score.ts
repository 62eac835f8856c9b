/**
 * In-memory scoring with the query language's semantics: what the memory backend searches with, and how SQLite
 * matches rows its read-only connection could not index.
 */
import type { QueryTerm, QueryWord } from "./query.js";
import { foldToken, indexTokens } from "./tokens.js";

/** Scores `text` against the terms in memory (0 = no match); the same semantics as the FTS5 expression. */
export function scoreText(terms: QueryTerm[], text: string): number {
  if (terms.length === 0) return 0;
  const folded = foldTerms(terms);
  // A word of marks alone folds to nothing: the engines' tokenizers drop it, so it matches nothing here either.
  if (folded.some((words) => words.includes(""))) return 0;
  // A token of marks alone is no word (not a gap in a phrase either), as in every engine's index.
  const tokens = indexTokens(text);
  let score = 0;
  for (const [i, term] of terms.entries()) {
    const words = folded[i]!;
    const hits = term.kind === "phrase" ? countPhrase(tokens, words) : countWord(tokens, words[0]!, term);
    if (hits === 0) return 0;
    score += hits;
  }
  return score;
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

function countWord(tokens: string[], folded: string, term: QueryWord): number {
  let hits = 0;
  const forms = term.forms;
  for (const token of tokens) {
    if (term.prefix === null ? token === folded : token.startsWith(folded)) hits++;
    else if (forms?.includes(token)) hits++;
  }
  return hits;
}

function countPhrase(tokens: string[], words: string[]): number {
  let hits = 0;
  for (let i = 0; i + words.length <= tokens.length; i++) {
    if (words.every((word, j) => tokens[i + j] === word)) hits++;
  }
  return hits;
}

/**
 * How often each term occurs in `text` (a phrase: its occurrences in order) and how many words the text has: the
 * inputs of a BM25 weight, with the query language's own matching.
 */
export function termFrequencies(terms: QueryTerm[], text: string): { tf: number[]; length: number } {
  const folded = foldTerms(terms);
  const tokens = indexTokens(text);
  const tf = terms.map((term, i) => {
    const words = folded[i]!;
    if (words.includes("")) return 0;
    return term.kind === "phrase" ? countPhrase(tokens, words) : countWord(tokens, words[0]!, term);
  });
  return { tf, length: tokens.length };
}
