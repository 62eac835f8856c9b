/**
 * Bounds on what a memory tool returns to the model. A tool result lands in the model's context whole: ten
 * stored messages of 1.6 MB made `session_search` return 16 MB (≈ 4M tokens), more than any model accepts. Every
 * generated tool therefore caps each search hit and its whole result, and says so in a visible marker that tells
 * the model how to reach the rest. Results within the caps are the reference's exact strings.
 */
import { count } from "../message/describe.js";
import { toolOutputLimitsSchema } from "../schema/limits.js";
import { parseInput } from "../schema/parse.js";
import { hasCjk } from "../search/cjk.js";
import { otherForms, parseQuery, type QueryTerm } from "../search/query.js";
import { foldToken, NON_ASCII, TOKEN } from "../search/tokens.js";

/** How much a memory tool may return. */
export interface ToolOutputLimits {
  /**
   * Most characters of one search hit's content (default 8,000 ≈ 2k tokens). A longer hit shows the part around
   * its first match, with a marker.
   */
  maxHitChars: number;
  /**
   * Most characters of a whole tool result (default 32,000 ≈ 8k tokens). Search hits past it are left out and
   * counted in a marker; a longer document from `load_context` is returned in parts (`offset`).
   */
  maxOutputChars: number;
}

/** The defaults: a long answer fits one hit whole; ten hits of that size fit one result. */
export const DEFAULT_TOOL_OUTPUT_LIMITS: Readonly<ToolOutputLimits> = Object.freeze({
  maxHitChars: 8000,
  maxOutputChars: 32000,
});

// Room kept for a truncation marker, so that a bounded result, marker included, is never longer than its limit.
const MARKER_ROOM = 200;

/** Validates tool-output limits (a builder or `tools()` option), filling in the defaults. */
export function toolOutputLimits(
  options: Partial<ToolOutputLimits> | undefined,
  base: ToolOutputLimits = DEFAULT_TOOL_OUTPUT_LIMITS,
): ToolOutputLimits {
  if (options === undefined) return base;
  const { maxHitChars, maxOutputChars } = parseInput(toolOutputLimitsSchema, options);
  return {
    maxHitChars: maxHitChars ?? base.maxHitChars,
    maxOutputChars: maxOutputChars ?? base.maxOutputChars,
  };
}

const TOKEN_CHAR = /[\p{L}\p{N}\p{M}\p{Co}]/u;

/** The terms of a query that already ran (so already within the store's limits), for locating matches. */
function queryTerms(query: string): QueryTerm[] {
  return parseQuery(query, { maxQueryChars: query.length, maxQueryTerms: Number.MAX_SAFE_INTEGER });
}

/** Where the first word matching any term starts in `text` (0 when none does): the part worth showing. */
function firstMatch(text: string, terms: readonly QueryTerm[]): number {
  const wanted = terms.flatMap((term) => {
    const word = term.kind === "phrase" ? (term.words[0] ?? "") : (term.prefix ?? term.word);
    // A CJK word (a character pair, or one character) is not set off by spaces: it is found anywhere, as typed.
    if (hasCjk(word)) return [{ word, whole: false, anywhere: true }];
    const first = {
      word: foldToken(word),
      whole: term.kind === "phrase" || term.prefix === null,
      anywhere: false,
    };
    // A word's other forms (went for go, dogs for dog), each a whole word.
    const forms = term.kind === "word" ? otherForms(term) : [];
    return [first, ...forms.map((form) => ({ word: form, whole: true, anywhere: false }))];
  });
  if (wanted.length === 0) return 0;
  // Lower-casing and searching natively is fast (a hit may hold megabytes); it is exact for ASCII text. Text
  // with other characters may match only once folded (`cafe` finds `Café`), so it falls back to a token scan.
  const lower = text.toLowerCase();
  let best = -1;
  for (const { word, whole, anywhere } of wanted) {
    const at = anywhere ? lower.indexOf(word) : wordAt(lower, word, whole);
    if (at >= 0 && (best < 0 || at < best)) best = at;
  }
  if (best >= 0 || !NON_ASCII.test(text)) return Math.max(best, 0);
  // A CJK word found nowhere by the search above is in no token either.
  const words = wanted.filter((w) => !w.anywhere);
  for (const match of text.matchAll(TOKEN)) {
    const token = foldToken(match[0]);
    if (words.some((w) => (w.whole ? token === w.word : token.startsWith(w.word)))) return match.index;
  }
  return 0;
}

// The first occurrence of `word` at the start of a token of `text` (and at its end too when `whole`), or -1.
function wordAt(text: string, word: string, whole: boolean): number {
  if (word.length === 0) return -1;
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
    const before = at > 0 && TOKEN_CHAR.test(text[at - 1] ?? "");
    const after = whole && TOKEN_CHAR.test(text[at + word.length] ?? "");
    if (!before && !after) return at;
  }
  return -1;
}

// Never cut a surrogate pair in half.
function safeIndex(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return index > 0 && index < text.length && code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}

/**
 * One hit's content within `max` characters: unchanged when it fits, else the window around its first match
 * and a marker saying which part is shown and how to see another.
 */
export function clipHit(content: string, query: string, max: number): string {
  if (content.length <= max) return content;
  const room = max - MARKER_ROOM;
  const at = firstMatch(content, queryTerms(query));
  const start = safeIndex(content, Math.max(0, Math.min(at - Math.floor(room / 4), content.length - room)));
  const end = safeIndex(content, Math.min(content.length, start + room));
  return (
    `${start > 0 ? "…" : ""}${content.slice(start, end)}${end < content.length ? "…" : ""}\n` +
    `[hit truncated: characters ${count(start)}–${count(end)} of ${count(content.length)} shown; ` +
    "search with words from the part you need to see it]"
  );
}

/**
 * Formatted hits joined by `separator` within `max` characters in total: whole hits while they fit, then a
 * marker counting those left out. The first hit always shows (it is at most `maxHitChars` plus its marker).
 */
export function joinHits(formatted: readonly string[], separator: string, max: number): string {
  const all = formatted.join(separator);
  if (all.length <= max) return all;
  let out = "";
  let shown = 0;
  for (const hit of formatted) {
    const next = shown === 0 ? hit : `${out}${separator}${hit}`;
    if (next.length > max - MARKER_ROOM) break;
    out = next;
    shown++;
  }
  // A first hit longer than the whole limit (a hit limit above the output limit) is cut rather than dropped.
  if (shown === 0) {
    const first = formatted[0] ?? "";
    out = `${first.slice(0, safeIndex(first, max - MARKER_ROOM))}…`;
    shown = 1;
  }
  return (
    `${out}${separator}[output truncated: ${shown} of ${formatted.length} results shown (limit ${count(max)} ` +
    "characters); search with more specific words to see the others]"
  );
}

/**
 * Formats entry hits as the reference does: `[key]` then the content, hits separated by a blank line; each hit
 * and the whole within `limits` (a long hit shows the part around its first match of `query`, with a marker).
 */
export function formatEntryHits(
  hits: readonly { key: string; content: string }[],
  query = "",
  limits: ToolOutputLimits = DEFAULT_TOOL_OUTPUT_LIMITS,
): string | null {
  if (hits.length === 0) return null;
  const formatted = hits.map((hit) => `[${hit.key}]\n${clipHit(hit.content, query, limits.maxHitChars)}`);
  return joinHits(formatted, "\n\n", limits.maxOutputChars);
}

/** Any tool result within `max` characters; a longer one is cut with a marker that says how much is missing. */
export function clipOutput(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = safeIndex(text, max - MARKER_ROOM);
  return `${text.slice(0, end)}…\n[output truncated: ${count(end)} of ${count(text.length)} characters shown]`;
}

/**
 * A part of a long document starting at `offset`: the whole document when it fits, else `max` characters and a
 * marker naming the offset that continues it.
 */
export function documentPart(text: string, offset: number, max: number): string {
  if (offset === 0 && text.length <= max) return text;
  if (offset >= text.length) {
    return `[end of document: offset ${count(offset)} is past its ${count(text.length)} characters]`;
  }
  const start = safeIndex(text, offset);
  const end = safeIndex(text, Math.min(text.length, start + max - MARKER_ROOM));
  const part = text.slice(start, end);
  if (end >= text.length) return `${part}\n[end of document: characters ${count(start)}–${count(end)} shown]`;
  return (
    `${part}…\n[document truncated: characters ${count(start)}–${count(end)} of ${count(text.length)} shown; ` +
    `load it again with offset: ${end} for the next part]`
  );
}
