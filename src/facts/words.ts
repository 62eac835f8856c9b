// Search queries made from text (a fact's, a batch's): its content words, bounded, never a syntax of their own.
import { isEnglishFunctionWord } from "../search/stopwords.js";
import { tokenize } from "../search/tokens.js";

/** Words in a query made here: well under the query language's limit of 32 distinct words. */
export const MAX_QUERY_WORDS = 24;
/** Longer tokens (a pasted key, base64) are left out: they find nothing, and 24 of them could pass the query's size. */
const MAX_WORD_CHARS = 40;

/**
 * A query of the content words of `text`, the most frequent first, at most `max`: the query language reads plain
 * words whatever they hold (query.ts), so text from a conversation cannot turn into anything else.
 */
export function queryOf(text: string, max = MAX_QUERY_WORDS): string {
  const counts = new Map<string, number>();
  for (const word of tokenize(text, "words")) {
    if (word.length < 2 || word.length > MAX_WORD_CHARS || isEnglishFunctionWord(word)) continue;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, max)
    .map(([word]) => word)
    .join(" ");
}

/** A fact's text compared for repeats: case, accents' composition, spacing and closing punctuation folded. */
export function normalizeFact(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/[\s.!?;,]+$/u, "")
    .trim();
}
