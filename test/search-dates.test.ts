import assert from "node:assert/strict";
import { test } from "node:test";
import {
  isoWeek,
  MAX_TIME_TERMS,
  messageRecallTerms,
  timeTermCount,
  turnTimeTokens,
  withTimeTerms,
  withTimeTokens,
} from "../src/search/date-terms.js";
import { dateOf, dayFromDate, dayOf, MAX_TIME_REFS, type TimeRef, timeRefs } from "../src/search/dates.js";
import { searchPlan } from "../src/search/options.js";
import { recallTerms } from "../src/search/rank.js";

// Monday 8 May 2023, the day a turn is said on in most cases below.
const MAY_8 = dayOf("2023-05-08T13:56:00Z")!;

/** The refs of `text` as short strings: days as ISO dates, weeks by their Monday. */
function read(text: string, today = MAY_8, mode: "turn" | "query" = "turn"): string[] {
  return timeRefs(text, today, mode).map(show);
}

function iso(day: number): string {
  const { year, month, date } = dateOf(day);
  return `${year}-${String(month).padStart(2, "0")}-${String(date).padStart(2, "0")}`;
}

function show(ref: TimeRef): string {
  switch (ref.kind) {
    case "day":
      return iso(ref.day);
    case "week":
      return `week ${iso(ref.day - ((dateOf(ref.day).weekday + 6) % 7))}`;
    case "month":
      return `${ref.year}-${String(ref.month).padStart(2, "0")}`;
    case "year":
      return `year ${ref.year}`;
    case "monthday":
      return `--${ref.month}-${ref.date}`;
    case "monthname":
      return `month ${ref.month}`;
    case "weekday":
      return `weekday ${ref.weekday}`;
  }
}

test("absolute dates in every usual English order, with or without a year", () => {
  for (const text of ["7 May 2023", "7th May, 2023", "the 7th of May 2023", "May 7, 2023", "May 7th 2023"])
    assert.deepEqual(read(text), ["2023-05-07"], text);
  assert.deepEqual(read("on 2023-05-07"), ["2023-05-07"]);
  assert.deepEqual(read("Sept 3, 2021"), ["2021-09-03"]);
  assert.deepEqual(read("on 7 May"), ["--5-7"]);
  assert.deepEqual(read("May 7th"), ["--5-7"]);
  assert.deepEqual(read("Jan 5"), ["--1-5"]);
  // 29 February is a day of some year.
  assert.deepEqual(read("29 Feb"), ["--2-29"]);
  assert.deepEqual(read("in May 2023"), ["2023-05"]);
  assert.deepEqual(read("in May"), ["month 5"]);
  assert.deepEqual(read("since 2019"), ["year 2019"]);
});

test("a slashed date needs its year; day and month are told apart when one exceeds 12, else both are meant", () => {
  assert.deepEqual(read("13/5/2023"), ["2023-05-13"]);
  assert.deepEqual(read("5/13/2023"), ["2023-05-13"]);
  assert.deepEqual(read("5/7/2023"), ["2023-05-07", "2023-07-05"]);
  assert.deepEqual(read("5/7/23"), ["2023-05-07", "2023-07-05"]);
  assert.deepEqual(read("7/7/2023"), ["2023-07-07"]);
  for (const text of ["24/7", "1/2 cup", "13/13/2023"]) assert.deepEqual(read(text), [], text);
});

test("relative times resolve against the turn's day", () => {
  assert.deepEqual(read("I went yesterday"), ["2023-05-07"]);
  assert.deepEqual(read("last night"), ["2023-05-07"]);
  assert.deepEqual(read("the day before yesterday"), ["2023-05-06"]);
  assert.deepEqual(read("today"), ["2023-05-08"]);
  assert.deepEqual(read("tomorrow"), ["2023-05-09"]);
  assert.deepEqual(read("3 days ago"), ["2023-05-05"]);
  assert.deepEqual(read("a couple of days ago"), ["2023-05-06"]);
  assert.deepEqual(read("two weeks ago"), ["week 2023-04-24"]);
  assert.deepEqual(read("last week"), ["week 2023-05-01"]);
  assert.deepEqual(read("next week"), ["week 2023-05-15"]);
  assert.deepEqual(read("a month ago"), ["2023-04"]);
  assert.deepEqual(read("next month"), ["2023-06"]);
  assert.deepEqual(read("last month", dayOf("2023-01-15")!), ["2022-12"]);
  assert.deepEqual(read("14 months ago", dayOf("2023-01-15")!), ["2021-11"]);
  assert.deepEqual(read("last year"), ["year 2022"]);
  assert.deepEqual(read("4 years ago"), ["year 2019"]);
  assert.deepEqual(read("last May"), ["2022-05"]);
  assert.deepEqual(read("last April"), ["2023-04"]);
  assert.deepEqual(read("next May"), ["2024-05"]);
});

test("weekdays relative to the turn's day: last, next, this; a weekend is its two days", () => {
  // 8 May 2023 is a Monday.
  assert.deepEqual(read("last Friday"), ["2023-05-05"]);
  assert.deepEqual(read("last Monday"), ["2023-05-01"]);
  assert.deepEqual(read("next Monday"), ["2023-05-15"]);
  assert.deepEqual(read("next Friday"), ["2023-05-12"]);
  assert.deepEqual(read("this Monday"), ["2023-05-08"]);
  assert.deepEqual(read("last weekend"), ["2023-05-06", "2023-05-07"]);
  assert.deepEqual(read("this past weekend"), ["2023-05-06", "2023-05-07"]);
  assert.deepEqual(read("this weekend"), ["2023-05-13", "2023-05-14"]);
  // Said on Saturday 13 May: last weekend is the one before, next weekend the one after.
  const saturday = dayOf("2023-05-13T10:00:00Z")!;
  assert.deepEqual(read("last weekend", saturday), ["2023-05-06", "2023-05-07"]);
  assert.deepEqual(read("next weekend", saturday), ["2023-05-20", "2023-05-21"]);
  assert.deepEqual(read("last Saturday", saturday), ["2023-05-06"]);
  // A weekday alone: past or coming? A turn leaves it out; a query asks for that weekday.
  assert.deepEqual(read("on Friday"), []);
  assert.deepEqual(read("What happened on Friday?", MAY_8, "query"), ["weekday 5"]);
});

test("words that only look like times, nonsense and impossible dates name nothing", () => {
  for (const text of [
    "You may go in may",
    "May I ask?",
    "March on",
    "an august crowd",
    "Jan said hi",
    "2000 people came",
    "31 February 2023",
    "30 Feb",
    "0 May 2023",
    "32 May",
    "May 99",
    "last",
    "ago ago ago",
    "99999999999 days ago",
    "🙂 ✨",
    "",
  ])
    assert.deepEqual(read(text), [], text);
  assert.equal(dayFromDate(2023, 2, 29), undefined);
  assert.equal(dayFromDate(2024, 2, 29), dayOf("2024-02-29"));
  assert.equal(dayOf("not a time"), undefined);
  assert.deepEqual(turnTimeTokens("yesterday", "not a time"), []);
  assert.deepEqual(turnTimeTokens("yesterday", null), []);
});

test("a query's relative time resolves against today, or against a day the query names", () => {
  const today = dayOf("2026-11-29")!;
  assert.deepEqual(read("what did I do yesterday", today, "query"), ["2026-11-28"]);
  assert.deepEqual(read("What did Maria do last weekend before April 10, 2023?", today, "query"), [
    "2023-04-08",
    "2023-04-09",
    "2023-04-10",
  ]);
  assert.deepEqual(read("the puppy she got two weeks before August 11, 2023", today, "query"), [
    "week 2023-07-24",
    "2023-08-11",
  ]);
  // "before" counts back only in a query: in a turn it usually names an event ("two weeks before the wedding").
  assert.deepEqual(read("two weeks before the wedding"), []);
});

test("a turn's tokens: its own time at every precision, and the times it names", () => {
  assert.deepEqual(turnTimeTokens("I went yesterday", "2023-05-08T13:56:00Z"), [
    "xdtd20230508",
    "xdtn0508",
    "xdtk1",
    "xdtw202319",
    "xdtm202305",
    "xdto05",
    "xdty2023",
    "xdtd20230507",
    "xdtn0507",
    "xdtk0",
  ]);
  assert.equal(withTimeTokens("", "2023-05-08T13:56:00Z"), "", "no text, no turn, no tokens");
  assert.equal(withTimeTokens("🙂", "2023-05-08T13:56:00Z"), "🙂");
  assert.equal(withTimeTokens("hi", undefined), "hi");
  assert.match(withTimeTokens("hi", "2023-05-08T13:56:00Z"), /^hi\nxdtd20230508 /);
  // A text full of dates stays bounded.
  const many = Array.from({ length: 200 }, (_, i) => `${(i % 28) + 1} May 2023`).join(", ");
  assert.ok(timeRefs(many, MAY_8, "turn").length <= MAX_TIME_REFS);
  assert.deepEqual(isoWeek(dayOf("2021-01-01")!), { year: 2020, week: 53 });
  assert.deepEqual(isoWeek(dayOf("2024-12-30")!), { year: 2025, week: 1 });
});

test("a query's times lead its terms, a day with its week; a query naming none keeps its terms as they are", () => {
  const now = Date.parse("2026-11-29T12:00:00Z");
  const terms = messageRecallTerms("What did Caroline do on 7 May 2023?", undefined, now);
  assert.deepEqual(
    terms.slice(0, 2).map((term) => (term.kind === "word" ? term.word : "")),
    ["xdtd20230507", "xdtw202318"],
  );
  assert.equal(timeTermCount(terms), 2);
  const plain = recallTerms("When did Caroline go to the support group?");
  assert.equal(withTimeTerms(plain, "When did Caroline go to the support group?", now), plain);
  assert.equal(timeTermCount(plain), 0);
  // A word spelled as a token is a word, not a time.
  assert.equal(timeTermCount(recallTerms("xdtd20230507")), 0);
  // Switched off (a search's `times: false`): the words alone.
  assert.deepEqual(
    messageRecallTerms("What did Caroline do on 7 May 2023?", undefined, now, false),
    recallTerms("What did Caroline do on 7 May 2023?"),
  );
  assert.equal(searchPlan({ times: false }).times, false);
  assert.equal(searchPlan({}).times, true);
  assert.throws(() => searchPlan({ times: "no" } as never), { code: "INVALID_ARGUMENT" });
  const busy = "on 1 May 2023, 2 May 2023, 3 May 2023, 4 May 2023 and 5 May 2023";
  assert.equal(timeTermCount(messageRecallTerms(busy, undefined, now)), MAX_TIME_TERMS);
});
