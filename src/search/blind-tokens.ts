/**
 * The tokens of a keyed blind index (docs/PRIVACY.md, "Encryption at rest"): each word of an encrypted owner's
 * message, folded and split as every index holds words (tokens.ts), goes into the full-text index as one token of
 * keyed segments (store/crypto/blind.ts): one segment per prefix of the word from its third character (its first
 * for a CJK token) up to PREFIX_CAP characters, then one for the whole word. The first prefix's segment is 30 bits
 * (it tells apart every word start of a vocabulary: ~10,000 against 2^30), each later one 20 bits (it only tells
 * apart the few dozen next characters after the same prefix: a family query takes in a word that is none of its
 * own with a chance of ~3 in 100,000), which keeps the tokens, and so the index, short.
 *
 * One token per word keeps every BM25 input as it is in clear (term frequencies, document lengths, document
 * counts), and the segments keep the query language whole: a word is its whole token, a word family (`deploy*`)
 * is the prefix query of its prefix's segments (every word starting with `deploy` has that token prefix), a phrase
 * is its words' tokens in a row. A single keyed hash per word would have lost the families, or needed a token per
 * prefix beside each word (longer documents for BM25). The cost: the index shows, per owner, each word's length
 * (up to PREFIX_CAP) and which words share their first characters.
 */
import { SessionError } from "../errors.js";
import { BlindHasher, SEGMENT_CHARS } from "../store/crypto/blind.js";
import { hasCjk } from "./cjk.js";
import { isAscii } from "./tokens.js";

/**
 * The first character of every blind token: a private-use character (a token character to every tokenizer here),
 * so no word of text in clear, nor a family of one, reaches into the blind tokens (their segments are letters and
 * digits that a clear prefix such as `run*` would otherwise match by chance), and the clear vocabulary's ranges
 * never hold one.
 */
export const BLIND_MARK = "\uE000";

/** True when an index word starts as blind tokens do: such a word of a query matches nothing in clear. */
export function isBlindLike(word: string): boolean {
  return word.startsWith(BLIND_MARK);
}

/** Prefixes longer than this are cut here: a family of a longer root also finds words that differ after it. */
export const PREFIX_CAP = 32;
/** The shortest prefix with a segment of its own (shorter words have one for the whole word). */
export const PREFIX_START = 3;
// Characters of every segment after a token's first (20 bits), the whole word's included.
const NEXT_CHARS = 4;
// Words whose tokens are kept per owner: a conversation's vocabulary repeats, and a word costs one HMAC per prefix.
const CACHE_WORDS = 20_000;

/** Most owners with a key one search may span (each adds its own tokens to every term of the query). */
const MAX_BLIND_OWNERS = 16;

/** `INVALID_ARGUMENT` when a search spans more owners with a key than {@link MAX_BLIND_OWNERS}. */
export function assertBlindOwners(owners: number): void {
  if (owners > MAX_BLIND_OWNERS) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `A search may span at most ${MAX_BLIND_OWNERS} owners with a key (its terms are hashed per owner); this one spans ${owners}`,
      { issues: [{ path: "sessionIds", rule: "range" }] },
    );
  }
}

/** One owner's blind tokens (the hasher holds its key). */
export class BlindTokens {
  private readonly words = new Map<string, string>();
  private readonly prefixes = new Map<string, string>();

  constructor(private readonly hasher: BlindHasher) {}

  /** The token of an index word (folded, as indexTokens gives it). */
  word(word: string): string {
    const cached = this.words.get(word);
    if (cached !== undefined) return cached;
    const token = BLIND_MARK + this.chain(chars(word), true) + this.hasher.segment("w", word, NEXT_CHARS);
    remember(this.words, word, token);
    return token;
  }

  /**
   * The token prefix that every word starting with `prefix` (folded) has, or null when the prefix is shorter than
   * its first segment (two letters): then only the word itself can be matched ({@link word}).
   */
  prefix(prefix: string): string | null {
    const cached = this.prefixes.get(prefix);
    if (cached !== undefined) return cached;
    const cs = chars(prefix);
    if (cs.length < startOf(cs)) return null;
    const token = BLIND_MARK + this.chain(cs, false);
    remember(this.prefixes, prefix, token);
    return token;
  }

  /** Index words as the index holds them for this owner: their tokens, one space apart. */
  text(words: readonly string[]): string {
    return words.map((word) => this.word(word)).join(" ");
  }

  // The segments of every prefix of `cs` from its first segment on, up to PREFIX_CAP characters; for a whole word,
  // a word shorter than the first segment's prefix starts at its own length.
  private chain(cs: readonly string[], whole: boolean): string {
    const start = Math.max(1, whole ? Math.min(startOf(cs), cs.length) : startOf(cs));
    let out = "";
    let prefix = cs.slice(0, start - 1).join("");
    for (let n = start; n <= Math.min(cs.length, PREFIX_CAP); n++) {
      prefix += cs[n - 1];
      out += this.hasher.segment("p", prefix, n === start ? SEGMENT_CHARS : NEXT_CHARS);
    }
    return out;
  }
}

// A CJK token's family is its first character (cjk.ts): its segments start there.
function startOf(cs: readonly string[]): number {
  const first = cs[0];
  return first !== undefined && !isAscii(first) && hasCjk(first) ? 1 : PREFIX_START;
}

function chars(text: string): string[] {
  return isAscii(text) ? text.split("") : Array.from(text);
}

function remember(cache: Map<string, string>, key: string, value: string): void {
  if (cache.size >= CACHE_WORDS) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
}

// One owner's tokens per key object: a keyring answers the same key object each time (a forgotten key's entry goes
// with it).
const byKey = new WeakMap<Uint8Array, BlindTokens>();

/** The blind tokens of the owner whose key is `ownerKey` (made once per key object). */
export function blindTokensOf(ownerKey: Uint8Array): BlindTokens {
  let tokens = byKey.get(ownerKey);
  if (tokens === undefined) {
    tokens = new BlindTokens(new BlindHasher(ownerKey));
    byKey.set(ownerKey, tokens);
  }
  return tokens;
}
