/**
 * The times an English text names, resolved against a day: absolute dates ("7 May 2023", "May 7th, 2023",
 * "2023-05-07", "5/7/2023"), months and years ("in May 2023", "in May", "in 2023"), weekdays, and relative times
 * ("yesterday", "two weeks ago", "last Friday", "next month", "last weekend"). Recall indexes a turn's times resolved
 * against the turn's own day and asks for a query's resolved against today (date-tokens.ts). Days are UTC
 * calendar days. A rule-based reader, no model: what it does not understand it leaves out, it never guesses.
 */

/** A time a text names: a day, an ISO week, a month, a year, a day or month of any year, a weekday. */
export type TimeRef =
  | { kind: "day"; day: number }
  | { kind: "week"; day: number }
  | { kind: "month"; year: number; month: number }
  | { kind: "year"; year: number }
  | { kind: "monthday"; month: number; date: number }
  | { kind: "monthname"; month: number }
  | { kind: "weekday"; weekday: number };

/** How a text is read: a turn's ("on Friday" alone is left out: past or coming?) or a query's (any Friday). */
export type DateMode = "turn" | "query";

/** Most times one text yields: a long message full of dates stays bounded (each costs index tokens). */
export const MAX_TIME_REFS = 24;

const DAY_MS = 86_400_000;
/** The English month names, January first. */
export const MONTHS: readonly string[] = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
const MONTH_ABBR: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, jun: 6, jul: 7, aug: 8, sep: 9 };
MONTH_ABBR.sept = 9;
MONTH_ABBR.oct = 10;
MONTH_ABBR.nov = 11;
MONTH_ABBR.dec = 12;
// Month names that are also common words (a modal, a verb, an adjective): alone, only capitalised after a preposition.
const AMBIGUOUS_MONTHS = new Set([5, 3, 8]);
const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const NUMBERS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6 };
Object.assign(NUMBERS, { seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12, couple: 2 });
// Words before a month or a year alone that make it a time ("in May", "since 2021"), not a word or a number.
const TIME_PREPOSITIONS = new Set([
  "in",
  "of",
  "during",
  "since",
  "until",
  "till",
  "by",
  "before",
  "after",
  "early",
]);
for (const word of [
  "late",
  "mid",
  "from",
  "through",
  "throughout",
  "around",
  "about",
  "last",
  "next",
  "this",
]) {
  TIME_PREPOSITIONS.add(word);
}
const UNITS: Record<string, "day" | "week" | "month" | "year"> = { day: "day", days: "day", week: "week" };
Object.assign(UNITS, { weeks: "week", month: "month", months: "month", year: "year", years: "year" });
// A cheap test that a text may name a time at all (a digit, or a word that can start one): most messages and
// questions do not, and skip the scan.
const MAY_NAME_TIME =
  /\d|\b(?:yesterday|today|tonight|tomorrow|ago|last|next|past|weeks?|weekend|months?|years?|jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec|january|february|march|april|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i;
// The words a time can start with, besides a number.
const STARTS = new Set([...MONTHS, ...Object.keys(MONTH_ABBR), ...WEEKDAYS, ...Object.keys(NUMBERS)]);
for (const word of ["yesterday", "today", "tonight", "tomorrow", "day", "last", "past", "next", "this"])
  STARTS.add(word);
const WORDS = /\d{4}-\d{1,2}-\d{1,2}|\d{1,2}\/\d{1,2}\/\d{2,4}|\d+(?:st|nd|rd|th)?|[A-Za-z]+/g;

/** The UTC day number (days since 1970-01-01) of a time, or undefined for an invalid one. */
export function dayOf(time: Date | string | number): number | undefined {
  const ms = time instanceof Date ? time.getTime() : typeof time === "number" ? time : Date.parse(time);
  return Number.isFinite(ms) ? Math.floor(ms / DAY_MS) : undefined;
}

/** The day number of a calendar date, or undefined when no such date exists (31 February). */
export function dayFromDate(year: number, month: number, date: number): number | undefined {
  if (month < 1 || month > 12 || date < 1 || date > 31 || year < 1000 || year > 9999) return undefined;
  const ms = Date.UTC(year, month - 1, date);
  const back = new Date(ms);
  return back.getUTCDate() === date && back.getUTCMonth() === month - 1 ? ms / DAY_MS : undefined;
}

/** The calendar date of a day number. */
export function dateOf(day: number): { year: number; month: number; date: number; weekday: number } {
  const d = new Date(day * DAY_MS);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    date: d.getUTCDate(),
    weekday: d.getUTCDay(),
  };
}

/**
 * The times `text` names, resolved against day number `today` (see the module comment), at most MAX_TIME_REFS. A
 * query that names a day resolves its relative times against that day ("last weekend before April 10, 2023").
 */
export function timeRefs(text: string, today: number, mode: DateMode): TimeRef[] {
  if (!MAY_NAME_TIME.test(text)) return [];
  const { refs, relative, anchor } = scan(text, today, mode);
  if (mode === "turn" || !relative || anchor === undefined) return refs;
  return scan(text, anchor, mode).refs;
}
// The times of `text` read against `today`; whether any is relative, and the first day it names outright.
function scan(
  text: string,
  today: number,
  mode: DateMode,
): { refs: TimeRef[]; relative: boolean; anchor?: number } {
  const raw = text.match(WORDS) ?? [];
  const words = raw.map((word) => word.toLowerCase());
  const refs: TimeRef[] = [];
  let relative = false;
  let anchor: number | undefined;
  for (let i = 0; i < words.length && refs.length < MAX_TIME_REFS; ) {
    const code = words[i]!.charCodeAt(0);
    // Only a number or a word that can start a time is read further (most words are neither).
    const read =
      (code >= 48 && code <= 57) || STARTS.has(words[i]!) ? readAt(words, raw, i, today, mode) : undefined;
    if (read === undefined) {
      i++;
      continue;
    }
    if (read.relative) relative = true;
    else if (anchor === undefined && read.refs[0]?.kind === "day") anchor = read.refs[0].day;
    refs.push(...read.refs);
    i = read.next > i ? read.next : i + 1;
  }
  const out = { refs: refs.slice(0, MAX_TIME_REFS), relative };
  return anchor === undefined ? out : { ...out, anchor };
}

interface Read {
  refs: TimeRef[];
  next: number;
  /** Read against today (yesterday, last week, two days ago), not named outright. */
  relative?: true;
}

function relative(refs: TimeRef[], next: number): Read {
  return { refs, next, relative: true };
}

// The time that starts at word i, if any.
function readAt(words: string[], raw: string[], i: number, today: number, mode: DateMode): Read | undefined {
  const w = words[i]!;
  const first = w.charCodeAt(0);
  if (first >= 48 && first <= 57) return readNumber(words, i, today, mode);
  const month = monthOf(w);
  if (month !== undefined) return readMonthFirst(words, raw, i, month);
  switch (w) {
    case "yesterday":
      return relative([{ kind: "day", day: today - 1 }], i + 1);
    case "today":
    case "tonight":
      return relative([{ kind: "day", day: today }], i + 1);
    case "tomorrow":
      return relative([{ kind: "day", day: today + 1 }], i + 1);
    case "day": {
      const after = words[i + 1] === "before" ? -2 : words[i + 1] === "after" ? 2 : 0;
      const anchor = after < 0 ? "yesterday" : "tomorrow";
      if (after !== 0 && words[i + 2] === anchor)
        return relative([{ kind: "day", day: today + after }], i + 3);
      return undefined;
    }
    case "last":
      if (words[i + 1] === "night") return relative([{ kind: "day", day: today - 1 }], i + 2);
      return readShifted(words, i, today);
    case "past":
    case "next":
    case "this":
      return readShifted(words, i, today);
  }
  const unit = NUMBERS[w];
  if (unit !== undefined) return readAgo(words, i, unit, today, mode);
  const weekday = WEEKDAYS.indexOf(w);
  if (weekday >= 0 && mode === "query") return { refs: [{ kind: "weekday", weekday }], next: i + 1 };
  return undefined;
}

// "7 May 2023", "7th of May", "2023-05-07", "5/7/2023", "in 2023", "3 days ago".
function readNumber(words: string[], i: number, today: number, mode: DateMode): Read | undefined {
  const w = words[i]!;
  if (w.includes("-")) {
    const [y, m, d] = w.split("-").map(Number) as [number, number, number];
    return dayRead(y, m, d, i + 1);
  }
  if (w.includes("/")) return readSlashed(w, i);
  const n = Number.parseInt(w, 10);
  const ordinal = /\D/.test(w);
  let j = i + 1;
  if (words[j] === "of") j++;
  const month = monthOf(words[j] ?? "");
  if (month !== undefined) {
    // A number before a month is its day: one no month has (0 May, 32 May 2023) names nothing.
    if (n < 1 || n > 31) return { refs: [], next: yearAt(words, j + 1) === undefined ? j + 1 : j + 2 };
    const year = yearAt(words, j + 1);
    if (year !== undefined) return dayRead(year, month, n, j + 2);
    return validMonthday(month, n)
      ? { refs: [{ kind: "monthday", month, date: n }], next: j + 1 }
      : undefined;
  }
  if (!ordinal && n >= 1 && n <= 99) {
    const ago = readAgo(words, i, n, today, mode);
    if (ago !== undefined) return ago;
  }
  if (!ordinal && w.length === 4 && TIME_PREPOSITIONS.has(words[i - 1] ?? "") && isYear(n)) {
    return { refs: [{ kind: "year", year: n }], next: i + 1 };
  }
  return undefined;
}

// A slashed date needs its year ("24/7", "1/2" are no dates). Day and month are told apart when one exceeds 12;
// when both could be the month, both days are meant (5/7/2023: 7 May or 5 July).
function readSlashed(w: string, i: number): Read | undefined {
  const [a, b, c] = w.split("/").map(Number) as [number, number, number];
  const year = c < 100 ? 2000 + c : c;
  const refs: TimeRef[] = [];
  const push = (month: number, date: number) => {
    const day = dayFromDate(year, month, date);
    if (day !== undefined && !refs.some((ref) => ref.kind === "day" && ref.day === day))
      refs.push({ kind: "day", day });
  };
  if (a <= 12) push(a, b);
  if (b <= 12) push(b, a);
  return refs.length === 0 ? undefined : { refs, next: i + 1 };
}

// "May 7, 2023", "May 7th", "May 2023", "in May"; abbreviations only with a number.
function readMonthFirst(words: string[], raw: string[], i: number, month: number): Read | undefined {
  const next = words[i + 1] ?? "";
  const abbreviated = !MONTHS.includes(words[i]!);
  if (/^\d{1,2}(?:st|nd|rd|th)?$/.test(next)) {
    const date = Number.parseInt(next, 10);
    const year = yearAt(words, i + 2);
    if (year !== undefined) return dayRead(year, month, date, i + 3);
    if (validMonthday(month, date)) return { refs: [{ kind: "monthday", month, date }], next: i + 2 };
  }
  const year = yearAt(words, i + 1);
  if (year !== undefined) return { refs: [{ kind: "month", year, month }], next: i + 2 };
  if (abbreviated) return undefined;
  const before = words[i - 1] ?? "";
  if (!TIME_PREPOSITIONS.has(before) || before === "last" || before === "next" || before === "this")
    return undefined;
  if (AMBIGUOUS_MONTHS.has(month) && raw[i]!.charCodeAt(0) !== MONTHS[month - 1]!.toUpperCase().charCodeAt(0))
    return undefined;
  return { refs: [{ kind: "monthname", month }], next: i + 1 };
}

// "last week", "next month", "this past weekend", "last Friday", "last May", "past year".
function readShifted(words: string[], i: number, today: number): Read | undefined {
  let j = i + 1;
  let w = words[i]!;
  if (w === "this" && words[j] === "past") {
    w = "last";
    j++;
  }
  const what = words[j] ?? "";
  const sign = w === "next" ? 1 : w === "this" ? 0 : -1;
  const { year, month, weekday } = dateOf(today);
  const monday = today - ((weekday + 6) % 7);
  const done = (refs: TimeRef[]): Read => relative(refs, j + 1);
  if (what === "week") return sign === 0 ? undefined : done([{ kind: "week", day: today + 7 * sign }]);
  if (what === "weekend") {
    // last weekend: the one before this week; next weekend: the coming one, the one after when it is a weekend.
    const weekend = weekday === 0 || weekday === 6;
    const sat = monday + (sign < 0 ? -2 : sign > 0 && weekend ? 12 : 5);
    return done([
      { kind: "day", day: sat },
      { kind: "day", day: sat + 1 },
    ]);
  }
  if (what === "month") {
    if (sign === 0) return undefined;
    const shifted = month - 1 + sign;
    return done([{ kind: "month", year: year + Math.floor(shifted / 12), month: ((shifted + 12) % 12) + 1 }]);
  }
  if (what === "year") return sign === 0 ? undefined : done([{ kind: "year", year: year + sign }]);
  const day = WEEKDAYS.indexOf(what);
  if (day >= 0) {
    // last Friday: the latest before today; next or this Friday: the first after today (this: today included).
    if (sign < 0) return done([{ kind: "day", day: today - (((weekday - day + 6) % 7) + 1) }]);
    const ahead = sign > 0 ? ((day - weekday + 6) % 7) + 1 : (day - weekday + 7) % 7;
    return done([{ kind: "day", day: today + ahead }]);
  }
  const named = MONTHS.indexOf(what) + 1;
  if (named > 0 && sign !== 0) {
    // last May: the latest May before this month; next May: the first after it.
    const y = sign < 0 ? (named < month ? year : year - 1) : named > month ? year : year + 1;
    return done([{ kind: "month", year: y, month: named }]);
  }
  return undefined;
}

// "3 days ago", "a couple of weeks ago", "two months ago", "a year ago" (count at i); in a query also "two weeks
// before", which a date the query names anchors (see timeRefs).
function readAgo(words: string[], i: number, count: number, today: number, mode: DateMode): Read | undefined {
  let j = i + 1;
  if (words[i] === "a" && words[j] === "couple") {
    count = 2;
    j++;
  }
  if (words[j] === "of") j++;
  const unit = UNITS[words[j] ?? ""];
  const back = words[j + 1];
  if (unit === undefined || (back !== "ago" && (mode === "turn" || back !== "before"))) return undefined;
  const next = j + 2;
  if (unit === "day") return relative([{ kind: "day", day: today - count }], next);
  if (unit === "week") return relative([{ kind: "week", day: today - 7 * count }], next);
  const { year, month } = dateOf(today);
  if (unit === "year") return relative([{ kind: "year", year: year - count }], next);
  const shifted = month - 1 - count;
  const y = year + Math.floor(shifted / 12);
  return relative([{ kind: "month", year: y, month: (((shifted % 12) + 12) % 12) + 1 }], next);
}

// A date that does not exist (31 February 2023) names no time, and its words are read no further.
function dayRead(year: number, month: number, date: number, next: number): Read {
  const day = dayFromDate(year, month, date);
  return { refs: day === undefined ? [] : [{ kind: "day", day }], next };
}

function monthOf(word: string): number | undefined {
  const full = MONTHS.indexOf(word);
  return full >= 0 ? full + 1 : MONTH_ABBR[word];
}

// A year written after a month or a day ("May 2023", "7 May, 2023").
function yearAt(words: string[], i: number): number | undefined {
  const w = words[i] ?? "";
  if (w.length !== 4) return undefined;
  const n = Number(w);
  return isYear(n) ? n : undefined;
}

function isYear(n: number): boolean {
  return Number.isInteger(n) && n >= 1000 && n <= 2999;
}

// 29 February is a day of some year, so it is valid without one.
function validMonthday(month: number, date: number): boolean {
  return dayFromDate(2000, month, date) !== undefined;
}
