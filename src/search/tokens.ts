/**
 * Text as every index holds it and every query is split: tokens (letters, digits, marks), lower-cased, folded
 * (case, diacritics) and, for Chinese, Japanese and Korean, split in character pairs (cjk.ts). Memory, SQLite and
 * Postgres index what these functions give, and the query language (query.ts) splits queries with them, so the
 * backends agree on what a word is.
 */
import { type CjkMode, hasCjk, splitCjk } from "./cjk.js";

/** Token characters: letters, digits, combining marks and private-use characters (as SQLite's unicode61). */
export const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
/** One token character: searchable text (`searchableText`) without one has no word an index could hold. */
export const TOKEN_CHARACTER = /[\p{L}\p{N}\p{M}\p{Co}]/u;
/** Any character outside ASCII: only text holding one needs Unicode folding. */
export const NON_ASCII = /[^\p{ASCII}]/u;

// Plain ASCII text (most queries) takes regexes without Unicode property classes: on ASCII they match the same
// characters (letters and digits), at a fraction of the cost — parsing a query took ~40 µs of a ~500 µs search.
const ASCII_TOKEN = /[a-z0-9]+/g;

/** True when every character of `text` is ASCII (most text: it takes the cheap paths). */
export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * Text for an engine's index, as the query language reads it: its tokens, folded, one space apart (ASCII text as
 * is). SQLite's unicode61 splits and folds by its own tables: it kept non-Latin marks ("Αθήνα" was not found by
 * "αθηνα" there, and was on memory and Postgres) and joined newer symbols (🤔) to the word next to them.
 */
export function searchableText(text: string): string {
  return isAscii(text) ? text : indexTokens(text).join(" ");
}

/** The words of `text` as an index holds them: tokens, folded, without those that fold to nothing. */
export function indexTokens(text: string): string[] {
  if (isAscii(text)) return tokenize(text);
  const cjk = hasCjk(text);
  const out: string[] = [];
  // Each token is lower-cased alone (see tokenize); only non-ASCII ones need folding (normalisation is most of the
  // cost), and a CJK run is folded once, before it is split, not pair by pair.
  for (const match of text.match(TOKEN) ?? []) {
    const token = match.toLowerCase();
    const folded = NON_ASCII.test(token) ? foldToken(token) : token;
    if (folded.length === 0) continue;
    if (cjk && hasCjk(folded)) splitCjk(folded, "index", out);
    else out.push(folded);
  }
  return out;
}

/** The searchable text of a search-block entry on every backend: its key and its content, so a title finds it. */
export function entryText(key: string, content: string): string {
  return `${key}\n${content}`;
}

/**
 * Splits text into lower-cased tokens; Chinese, Japanese and Korean runs into overlapping character pairs, as
 * `mode` says (cjk.ts: the index's way by default).
 */
export function tokenize(text: string, mode: CjkMode = "index"): string[] {
  if (isAscii(text)) return text.toLowerCase().match(ASCII_TOKEN) ?? [];
  // Each token is lower-cased alone: Greek capital sigma lower-cases by what follows it, so in "ΛΟΓΟΣ'ΚΑΙ" it
  // became σ (a letter follows the apostrophe), a word "λογος" did not match, and SQLite (ς and σ are one) did.
  const tokens = (text.match(TOKEN) ?? []).map((token) => token.toLowerCase());
  if (!hasCjk(text)) return tokens;
  const out: string[] = [];
  tokens.forEach((token, i) => {
    // A CJK run is split folded (its pairs come out folded): so Korean pairs syllables, which NFD takes apart.
    if (hasCjk(token)) splitCjk(foldToken(token), mode, out, i === tokens.length - 1);
    else out.push(token);
  });
  return out;
}

/** Lower-cases and strips diacritics, for comparing tokens outside a database. */
export function foldToken(token: string): string {
  if (isAscii(token)) return token.toLowerCase();
  const folded = token
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase();
  // NFD takes a Hangul syllable apart into letters (not marks): join them again, so Korean is paired by syllable.
  return HANGUL_LETTERS.test(folded) ? folded.normalize("NFC") : folded;
}

// The conjoining Hangul letters NFD makes of a syllable.
const HANGUL_LETTERS = /[\u1100-\u11ff]/;

/** The folded words of a text, as a query's words are compared with a name (a fact's subject, a message's author). */
export function foldedWords(text: string): string[] {
  return tokenize(text, "words").map(foldToken);
}
