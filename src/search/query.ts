/**
 * The one search-query language of every backend: words (any order), `"quoted phrases"` that match as phrases, a
 * word also finds its family ("deploy" finds "deployment", "deployed"), and any other character is plain text — no
 * input can raise a syntax error. Ranked recall (rank.ts) needs any content word; `match: "all"` every word.
 */
import { hasCjk, isSingleCjk } from "./cjk.js";
import { assertQueryTerms, DEFAULT_QUERY_LIMITS, parseQueryText, type QueryLimits } from "./limits.js";
import { foldToken, isAscii, tokenize } from "./tokens.js";
import { irregularForms, shortWordForms } from "./word-forms.js";

/** A word of the query and the prefix that stands for its family. */
export interface QueryWord {
  kind: "word";
  word: string;
  /** Prefix to match (`root*`), or null when the word must match exactly (short words, numbers). */
  prefix: string | null;
  /**
   * Other forms of the word, each matched exactly besides the word or its prefix, the base form first: an irregular
   * lemma's (`go goes going went gone`), or a short word's regular inflections (`dog dogs dogged dogging`). Absent
   * for other words (word-forms.ts).
   */
  forms?: readonly string[];
}

/** A quoted phrase: its words must appear next to each other, in order. */
export interface QueryPhrase {
  kind: "phrase";
  words: string[];
}

export type QueryTerm = QueryWord | QueryPhrase;

const SUFFIXES = [
  "ational",
  "ations",
  "ation",
  "ements",
  "ement",
  "ments",
  "ment",
  "ingly",
  "ings",
  "ing",
  "edly",
  "ers",
  "ies",
  "ied",
  "ed",
  "er",
  "es",
  "ly",
  "s",
];
const MIN_ROOT = 3;

/**
 * The family prefix of an English word: common inflectional and derivational suffixes stripped, so that a prefix
 * match on it finds the word's family whichever form the user typed. Written with character codes rather than
 * regular expressions: every search parses its query with cold caches, where each expression's compiled code
 * costs a fetch (regexes made ~5 of a query parse's ~18 µs).
 */
export function wordRoot(word: string): string {
  for (let i = 0; i < word.length; i++) if (!isLowerLetter(word.charCodeAt(i))) return word;
  let root = word;
  for (const suffix of SUFFIXES) {
    if (root.endsWith(suffix) && root.length - suffix.length >= MIN_ROOT) {
      root = root.slice(0, -suffix.length);
      break;
    }
  }
  // running → runn → run; stopped → stopp → stop (but not fall, miss, buzz)
  if (root !== word && root.length > MIN_ROOT) {
    const last = root.charCodeAt(root.length - 1);
    if (
      last === root.charCodeAt(root.length - 2) &&
      !isVowel(last) &&
      last !== L &&
      last !== S &&
      last !== Z
    ) {
      root = root.slice(0, -1);
    }
  }
  // create → creat (finds creating, creation); happy → happ (finds happiness, happily)
  if (root.length > MIN_ROOT + 1) {
    const last = root.charCodeAt(root.length - 1);
    if (last === E || (last === Y && !isVowel(root.charCodeAt(root.length - 2)))) root = root.slice(0, -1);
  }
  return root;
}

// Character codes the scans and rules compare against.
const A = "a".charCodeAt(0);
const E = "e".charCodeAt(0);
const I = "i".charCodeAt(0);
const L = "l".charCodeAt(0);
const O = "o".charCodeAt(0);
const S = "s".charCodeAt(0);
const U = "u".charCodeAt(0);
const Y = "y".charCodeAt(0);
const Z = "z".charCodeAt(0);
const ZERO = "0".charCodeAt(0);
const NINE = "9".charCodeAt(0);
const SPACE = " ".charCodeAt(0);
const QUOTE = '"'.charCodeAt(0);
const ASCII_MAX = 0x7f;
// Upper- and lower-case ASCII letters differ in this bit alone.
const LOWER_BIT = 0x20;

function isLowerLetter(code: number): boolean {
  return code >= A && code <= Z;
}

function isVowel(code: number): boolean {
  return code === A || code === E || code === I || code === O || code === U;
}

function isDigits(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const digit = word.charCodeAt(i);
    if (digit < ZERO || digit > NINE) return false;
  }
  return true;
}

/**
 * Parses a user query; an empty list means there is nothing to search for. Repeated words and phrases collapse
 * (compared after folding case and diacritics, and a word by its family), so the result holds distinct terms
 * only. A query over `limits` (length, distinct words) is refused with `INVALID_ARGUMENT` before it costs
 * anything: every backend parses here, so every backend bounds the same way.
 */
export function parseQuery(query: string, limits: QueryLimits = DEFAULT_QUERY_LIMITS): QueryTerm[] {
  const terms = parseTerms(query, limits);
  assertQueryTerms(termsCost(terms), limits);
  return terms;
}

/**
 * The distinct terms of a query whose length is within `limits`, their number not yet checked: ranked recall
 * checks it once the function words are gone (rank.ts), since only the words it searches for cost anything.
 */
export function parseTerms(query: string, limits: QueryLimits = DEFAULT_QUERY_LIMITS): QueryTerm[] {
  parseQueryText(query, limits);
  const plain = parsePlainQuery(query);
  if (plain !== undefined) return plain;
  const terms: QueryTerm[] = [];
  const seen = new Set<string>();
  const add = (term: QueryTerm): void => {
    const key = termKey(term);
    if (seen.has(key)) return;
    seen.add(key);
    terms.push(term);
  };
  const pieces = query.split('"');
  pieces.forEach((piece, index) => {
    const insideQuotes = index % 2 === 1 && index < pieces.length - 1;
    const tokens = tokenize(piece, insideQuotes ? "phrase" : "words");
    if (insideQuotes && tokens.length > 1) {
      add({ kind: "phrase", words: tokens });
      return;
    }
    for (const word of tokens) add(toWord(word));
  });
  return terms;
}

/** What `terms` count against the query's word limit: each word of a phrase counts (see wordCost). */
export function termsCost(terms: readonly QueryTerm[]): number {
  let words = 0;
  for (const term of terms) {
    if (term.kind === "word") words += wordCost(term.word);
    else for (const word of term.words) words += wordCost(word);
  }
  return Math.ceil(words);
}

const PLAIN_MAX_WORDS = 16;

/**
 * The terms of a plain ASCII query — what people and models type most: words, and words in quotes — in one scan
 * of its characters: the same terms the general parse gives, without its regular expressions, folding and key
 * set, which each cost a fetch of cold code on every search. Undefined for any other query, and for one with more
 * than PLAIN_MAX_WORDS distinct words.
 */
function parsePlainQuery(query: string): QueryTerm[] | undefined {
  const terms: QueryTerm[] = [];
  let words = 0;
  // Repeats are found by a linear scan: past a few distinct words the general parser's set is the cheaper one.
  const addWord = (token: string): void => {
    const word = toWord(token);
    // As termKey: a word with forms is the same term as another word of its base form, and nothing else.
    const seen = terms.some(
      (term) =>
        term.kind === "word" &&
        (term.forms !== undefined || word.forms !== undefined
          ? term.forms?.[0] === word.forms?.[0]
          : term.word === word.word || (term.prefix !== null && term.prefix === word.prefix)),
    );
    if (seen) return;
    terms.push(word);
    words++;
  };
  const addPhrase = (tokens: string[]): void => {
    // One word in quotes is a word, as in the general parse.
    if (tokens.length < 2) {
      if (tokens.length === 1) addWord(tokens[0] as string);
      return;
    }
    const seen = terms.some(
      (term) =>
        term.kind === "phrase" &&
        term.words.length === tokens.length &&
        term.words.every((word, at) => word === tokens[at]),
    );
    if (seen) return;
    terms.push({ kind: "phrase", words: tokens });
    words += tokens.length;
  };
  // The words since an opening quote; undefined outside quotes.
  let phrase: string[] | undefined;
  let start = -1;
  for (let i = 0; i <= query.length; i++) {
    const char = i < query.length ? query.charCodeAt(i) : SPACE;
    if (char > ASCII_MAX) return undefined;
    const lower = char | LOWER_BIT;
    if ((lower >= A && lower <= Z) || (char >= ZERO && char <= NINE)) {
      if (start < 0) start = i;
      continue;
    }
    if (start >= 0) {
      if (words + (phrase?.length ?? 0) >= PLAIN_MAX_WORDS) return undefined;
      const token = query.slice(start, i).toLowerCase();
      start = -1;
      if (phrase === undefined) addWord(token);
      else phrase.push(token);
    }
    if (char === QUOTE) {
      if (phrase !== undefined) addPhrase(phrase);
      phrase = phrase === undefined ? [] : undefined;
    }
  }
  // A quote never closed quotes nothing: its words are words.
  if (phrase !== undefined) for (const token of phrase) addWord(token);
  return terms;
}

/**
 * The forms of a word (see QueryWord.forms) that its own match misses: those neither the word itself nor
 * starting with its prefix. Only these need a look-up of their own ("making" looks up "made" beside `mak*`).
 */
export function otherForms(term: QueryWord): readonly string[] {
  const { forms, word, prefix } = term;
  if (forms === undefined) return [];
  return forms.filter((form) => form !== word && (prefix === null || !form.startsWith(prefix)));
}

// Two terms with the same key are one term: the same folded word, folded family prefix, base form (go and went), or
// folded phrase.
function termKey(term: QueryTerm): string {
  if (term.kind === "phrase") return `"${term.words.map(foldToken).join(" ")}`;
  if (term.forms !== undefined) return `~${term.forms[0]}`;
  return term.prefix === null ? `=${foldToken(term.word)}` : `*${foldToken(term.prefix)}`;
}

// Words of three letters or fewer match exactly: as prefixes ("the*", "run*") they expand to hundreds of index
// terms, which is slow and finds little the user meant; their inflections and irregular words' forms are listed
// instead (word-forms.ts). A CJK pair matches exactly too, and one CJK character stands for every index token it
// starts (cjk.ts).
function toWord(word: string): QueryWord {
  if (isAscii(word)) {
    const prefix = word.length < 4 || isDigits(word) ? null : wordRoot(word);
    const forms = irregularForms(word) ?? shortWordForms(word);
    return forms === undefined ? { kind: "word", word, prefix } : { kind: "word", word, prefix, forms };
  }
  if (hasCjk(word)) return { kind: "word", word, prefix: isSingleCjk(word) ? word : null };
  if (word.length < 4 || /^\p{N}+$/u.test(word)) return { kind: "word", word, prefix: null };
  return { kind: "word", word, prefix: wordRoot(word) };
}

// What a word counts against the query's word limit: a CJK pair half a word (a clause of n characters is n - 1
// pairs, each an exact index look-up, never a family), so a question in Chinese fits the limit as one in English
// of the same length does. An ASCII word is ruled out by its characters first: the plain parse keeps regular
// expressions off its path.
function wordCost(word: string): number {
  return !isAscii(word) && hasCjk(word) && !isSingleCjk(word) ? 0.5 : 1;
}
