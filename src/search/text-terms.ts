/**
 * A text's words as in-memory scoring reads them (score.ts), made once per text: the memory store keeps them with
 * each message version, so a search matches words instead of tokenising the store's text again (folding accented
 * text is most of that cost: 10 messages of 1.8 MB took seconds a search).
 */
import { indexTokens } from "./tokens.js";

/** A text's distinct index tokens with their counts, and its token sequence for phrases. */
export interface TextTerms {
  /** The text's distinct index tokens (tokens.ts), in order of first occurrence. */
  readonly words: readonly string[];
  /** How often each of `words` occurs. */
  readonly counts: Uint32Array;
  /** The text's tokens in order, each as its index in `words`: what a phrase is matched against. */
  readonly sequence: Uint32Array;
}

const EMPTY: TextTerms = { words: [], counts: new Uint32Array(0), sequence: new Uint32Array(0) };

/** The words of `text` as scoring reads them (see {@link TextTerms}). */
export function textTerms(text: string): TextTerms {
  const tokens = indexTokens(text);
  if (tokens.length === 0) return EMPTY;
  const ids = new Map<string, number>();
  const words: string[] = [];
  const sequence = new Uint32Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    let id = ids.get(token);
    if (id === undefined) {
      id = words.length;
      ids.set(token, id);
      words.push(ownString(token));
    }
    sequence[i] = id;
  }
  const counts = new Uint32Array(words.length);
  for (const id of sequence) counts[id]!++;
  return { words, counts, sequence };
}

// A token can be a slice of a lower-cased copy of the whole text (V8 keeps a substring of 13 or more characters
// as a view of its source), which would keep that copy alive as long as the word: 20 texts of 1.6 M characters in
// long capitalised words kept 31 MB that way, 1.4 MB with strings of their own (flattened from a concatenation).
function ownString(token: string): string {
  return token.length < 13 ? token : ` ${token}`.slice(1);
}
