/**
 * Words of the scripts an index cannot split on spaces. Chinese and Japanese are written without spaces between
 * words, and a Korean word carries its particles ("사과를": apple + object marker), so a tokenizer that splits on
 * spaces and punctuation makes one token of a whole clause ("我喜欢吃苹果") and "苹果" finds nothing. Without a
 * dictionary per language, the index holds such runs as overlapping character pairs, as Lucene's and
 * Elasticsearch's CJK analyzers do: "我喜欢吃苹果" is 我喜 喜欢 欢吃 吃苹 苹果. Every backend indexes and queries
 * through these functions (query.ts), so they agree.
 *
 * - **Index:** a run's pairs, then its last character alone. So every character of the run starts exactly one
 *   token, and a query of one character (猫, "cat") finds it wherever it stands as a prefix (`猫*`); a lone
 *   character is itself.
 * - **Query words:** a run's pairs, each a word (ranked recall counts how many a message holds: "你喜欢什么水果"
 *   shares 喜欢 with "我喜欢吃苹果"); one character alone is a prefix.
 * - **Quoted phrases:** as the index, so a phrase that runs on past a run lines up with it; a run that ends the
 *   phrase drops its last character (the pairs already hold it), so "喜欢苹" matches inside "喜欢苹果".
 */

/**
 * A character of the Han, Hiragana, Katakana or Hangul script, or the long-vowel mark ー (shared by both kana).
 * Not by script extension: that adds combining marks (U+0323, Vietnamese's dot below) and other shared symbols.
 */
const CJK_CHAR = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30fc\uff70]/u;

// Code-point ranges holding every character `hasCjk` matches (and some more).
const CJK_BLOCKS: readonly (readonly [number, number])[] = [
  [0x1100, 0x11ff], // Hangul Jamo
  [0x2e80, 0x9fff], // radicals, CJK symbols, kana, Bopomofo, Hangul compatibility jamo, enclosed, unified ideographs
  [0xa960, 0xa97f], // Hangul Jamo extended A
  [0xac00, 0xd7ff], // Hangul syllables, Jamo extended B
  [0xf900, 0xfaff], // compatibility ideographs
  [0xfe30, 0xfe4f], // compatibility forms
  [0xff00, 0xffef], // half- and full-width forms
  [0x16fe0, 0x16fff], // ideographic symbols
  [0x1aff0, 0x1b2ff], // kana extended and supplement
  [0x1f200, 0x1f2ff], // enclosed ideographic supplement
  [0x20000, 0x3ffff], // ideographs of the supplementary planes
];

/**
 * The body of a bracket expression (`a-b…`, no brackets) for the code-point ranges that hold every character
 * `hasCjk` matches (and some more): SQLite's GLOB and Postgres's regular expressions read it alike, so a database
 * finds the rows that may hold such text before JavaScript checks them.
 */
export const CJK_RANGES = CJK_BLOCKS.map(
  ([from, to]) => `${String.fromCodePoint(from)}-${String.fromCodePoint(to)}`,
).join("");

/** True when `text` holds a character that is indexed in pairs. */
export function hasCjk(text: string): boolean {
  return CJK_CHAR.test(text);
}

/** How a token's CJK runs are split: for the index, as query words, or inside a quoted phrase. */
export type CjkMode = "index" | "words" | "phrase";

/**
 * Appends the pieces of `token` (a folded token: letters and digits, no marks) to `out`: its other letters as one
 * token each stretch, its CJK runs split as `mode` says. `last` tells a phrase's tokenizer that this token ends the
 * phrase. Scans code points and tests the common blocks by number: a regular expression per character costs
 * ~0.5 µs, more than the rest of indexing a character.
 */
export function splitCjk(token: string, mode: CjkMode, out: string[], last = false): void {
  let other = -1;
  let run: string[] = [];
  for (let i = 0; i < token.length; ) {
    const code = token.codePointAt(i) as number;
    const width = code > 0xffff ? 2 : 1;
    if (isCjkCode(code, token, i, width)) {
      if (other >= 0) {
        out.push(token.slice(other, i));
        other = -1;
      }
      run.push(token.slice(i, i + width));
    } else {
      if (run.length > 0) {
        pushRun(run, mode, out, false);
        run = [];
      }
      if (other < 0) other = i;
    }
    i += width;
  }
  if (other >= 0) out.push(token.slice(other));
  if (run.length > 0) pushRun(run, mode, out, last);
}

function isCjkCode(code: number, token: string, at: number, width: number): boolean {
  if (code < 0x1100) return false;
  // Unified ideographs and Hangul syllables are all of their script; kana and the rest are asked of the table.
  if ((code >= 0x4e00 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7a3)) return true;
  return CJK_CHAR.test(token.slice(at, at + width));
}

function pushRun(run: readonly string[], mode: CjkMode, out: string[], endsPhrase: boolean): void {
  if (run.length === 1) {
    out.push(run[0]!);
    return;
  }
  for (let i = 0; i + 1 < run.length; i++) out.push(run[i]! + run[i + 1]!);
  if (mode === "index" || (mode === "phrase" && !endsPhrase)) out.push(run[run.length - 1]!);
}

/** True for one CJK character: a query word that stands for every index token it starts. */
export function isSingleCjk(word: string): boolean {
  const width = (word.codePointAt(0) ?? 0) > 0xffff ? 2 : 1;
  return word.length === width && CJK_CHAR.test(word);
}
