/**
 * Time-aware recall: a turn is indexed with tokens of its own time and of the times it names, resolved against its
 * own day ("yesterday" said on 8 May is 7 May), and a query that names a time asks for that time's token beside
 * its words. The tokens are ordinary index words (so every backend, and an encrypted owner's blind index, holds and
 * finds them as any word), spelled so that no text holds them: `xdt` + a kind letter + digits. A query's time terms
 * come first in its terms; in the ranking's tiers (rank.ts) they count together as one term, and only for a turn
 * that holds a word of the question too: the time lifts the turns of that time, it never replaces the words (a turn
 * matching the time alone is no hit); their BM25 weight adds to the relevance.
 */
import { dateOf, dayOf, type TimeRef, timeRefs } from "./dates.js";
import type { QueryLimits } from "./limits.js";
import type { QueryTerm, QueryWord } from "./query.js";
import { recallTerms } from "./rank.js";
import { TOKEN_CHARACTER } from "./tokens.js";

/** What every time token starts with (no English word does). */
export const TIME_TOKEN = "xdt";
/** Most time terms one query asks for (each is a term read like a word). */
export const MAX_TIME_TERMS = 4;

// The kinds, each a letter: d day, n day of any year (month and day), k weekday, w ISO week, m month, o month of any
// year, y year.
const pad = (n: number, width = 2): string => String(n).padStart(width, "0");

/** The ISO-8601 week (year and number) of a day number. */
export function isoWeek(day: number): { year: number; week: number } {
  const { weekday } = dateOf(day);
  const thursday = day - ((weekday + 6) % 7) + 3;
  const { year } = dateOf(thursday);
  const jan1 = Date.UTC(year, 0, 1) / 86_400_000;
  return { year, week: Math.floor((thursday - jan1) / 7) + 1 };
}

function dayToken(day: number): string {
  const { year, month, date } = dateOf(day);
  return `${TIME_TOKEN}d${year}${pad(month)}${pad(date)}`;
}

function weekToken(day: number): string {
  const { year, week } = isoWeek(day);
  return `${TIME_TOKEN}w${year}${pad(week)}`;
}

const monthToken = (year: number, month: number): string => `${TIME_TOKEN}m${year}${pad(month)}`;
const monthdayToken = (month: number, date: number): string => `${TIME_TOKEN}n${pad(month)}${pad(date)}`;
const monthnameToken = (month: number): string => `${TIME_TOKEN}o${pad(month)}`;
const yearToken = (year: number): string => `${TIME_TOKEN}y${year}`;
const weekdayToken = (weekday: number): string => `${TIME_TOKEN}k${weekday}`;

/** The token a query asks for a time by: the time itself, at the precision it was named. */
export function queryToken(ref: TimeRef): string {
  switch (ref.kind) {
    case "day":
      return dayToken(ref.day);
    case "week":
      return weekToken(ref.day);
    case "month":
      return monthToken(ref.year, ref.month);
    case "year":
      return yearToken(ref.year);
    case "monthday":
      return monthdayToken(ref.month, ref.date);
    case "monthname":
      return monthnameToken(ref.month);
    case "weekday":
      return weekdayToken(ref.weekday);
  }
}

/**
 * The tokens a turn is indexed with for a time it names: a day is also a day of its month (any year) and a weekday,
 * so "on 7 May" and "last Friday" find it; a month is also a month of any year.
 */
function indexTokensOf(ref: TimeRef, out: Set<string>): void {
  if (ref.kind === "day") {
    const { month, date, weekday } = dateOf(ref.day);
    out.add(dayToken(ref.day)).add(monthdayToken(month, date)).add(weekdayToken(weekday));
  } else if (ref.kind === "month") out.add(monthToken(ref.year, ref.month)).add(monthnameToken(ref.month));
  else out.add(queryToken(ref));
}

/**
 * The time tokens of a turn said at `time`: its own day, week, month and year (at every precision a query may name),
 * and each time its text names, resolved against that day. None when the time is missing or invalid.
 */
export function turnTimeTokens(text: string, time: Date | string | number | null | undefined): string[] {
  if (time === null || time === undefined) return [];
  const today = dayOf(time);
  if (today === undefined) return [];
  const out = new Set<string>();
  const { year, month } = dateOf(today);
  indexTokensOf({ kind: "day", day: today }, out);
  out.add(weekToken(today)).add(monthToken(year, month)).add(monthnameToken(month)).add(yearToken(year));
  for (const ref of timeRefs(text, today, "turn")) indexTokensOf(ref, out);
  return [...out];
}

/**
 * A turn's text as the index takes it: the text, then its time tokens on a line of their own (see the module
 * comment). Text without a word stays as it is (no turn: it gets no tokens, and stays out of the index).
 */
export function withTimeTokens(text: string, time: Date | string | number | null | undefined): string {
  const tokens = turnTokens(text, time);
  return tokens.length === 0 ? text : `${text}\n${tokens.join(" ")}`;
}

/** The time tokens a turn is indexed with: none for text without a word (no turn). */
export function turnTokens(text: string, time: Date | string | number | null | undefined): string[] {
  return TOKEN_CHARACTER.test(text) ? turnTimeTokens(text, time) : [];
}

// The query terms made here: the ranking tells them from the words by identity, so no word a user types is one.
const TIME_TERMS = new WeakSet<QueryWord>();

/**
 * The query's terms with the times it names first, each one term (at most MAX_TIME_TERMS), resolved against `now`.
 * A query that names no time gets `terms` themselves back (the same search as without this step).
 */
export function withTimeTerms(terms: QueryTerm[], query: string, now: number = Date.now()): QueryTerm[] {
  const today = dayOf(now);
  if (today === undefined) return terms;
  const tokens = new Set<string>();
  for (const ref of timeRefs(query, today, "query")) {
    if (tokens.size >= MAX_TIME_TERMS) break;
    tokens.add(queryToken(ref));
    // A day asked is also asked as its week, a term of its own: a turn of that day holds both, one of its week or
    // saying "last week" of it one ("the week before", "two weeks ago" name weeks, not days).
    if (ref.kind === "day" && tokens.size < MAX_TIME_TERMS)
      tokens.add(queryToken({ kind: "week", day: ref.day }));
  }
  if (tokens.size === 0) return terms;
  const times = [...tokens].map((word): QueryWord => {
    const term: QueryWord = { kind: "word", word, prefix: null };
    TIME_TERMS.add(term);
    return term;
  });
  return [...times, ...terms];
}

/** How many of `terms` lead as time terms (withTimeTerms): the ranking counts them as one term (rank.ts). */
export function timeTermCount(terms: readonly QueryTerm[]): number {
  let n = 0;
  while (n < terms.length && TIME_TERMS.has(terms[n] as QueryWord)) n++;
  return n;
}

/**
 * The terms of a message search's ranked recall: its content words (recallTerms) after the times it names, unless
 * `times` is false (the search's `times: false`: its words alone, as before time-aware recall).
 */
export function messageRecallTerms(
  query: string,
  limits?: QueryLimits,
  now?: number,
  times = true,
): QueryTerm[] {
  const words = recallTerms(query, limits);
  return times ? withTimeTerms(words, query, now) : words;
}
