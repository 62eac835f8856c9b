import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_QUERY_LIMITS, parseQueryText } from "../src/search/limits.js";
import { passesFilters, searchPlan } from "../src/search/options.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { filterSql } from "../src/sql/search/sqlite-filters.js";
import { assertSessionError } from "./helpers/session-error.js";

// The better-sqlite3 build for this Node (the package on 20, its Node-API alias on 22 and later).
const Database = loadBetterSqlite3();

import type { StoreSearchOptions } from "../src/contract/search.js";

// Every form a message's time may be stored in: toISOString's own, an adopted reference row's, extended years,
// an offset, and text that is no time at all.
const STORED = [
  "2020-01-01T00:00:00.000Z",
  "2020-06-15T12:30:00.000Z",
  "2021-01-01T00:00:00.000Z",
  "1999-12-31T23:59:59.999Z",
  "2020-06-15 12:30:00",
  "2020-06-15T12:30:00+05:00",
  "+010000-01-01T00:00:00.000Z",
  "-000001-01-01T00:00:00.000Z",
  "２０２０-01-01T00:00:00.000Z",
  "not a time",
  "",
];
const BOUNDS = [
  "2020-01-01T00:00:00.000Z",
  "2020-06-15T07:30:00.000Z",
  "2020-06-15T12:30:00.000Z",
  "2021-01-01T00:00:00Z",
  "+010000-01-01T00:00:00.000Z",
  "-000001-01-01T00:00:00.000Z",
];

const canonical = (time: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(time);

function plans(): StoreSearchOptions[] {
  const all: StoreSearchOptions[] = [{ role: "assistant" }, { role: ["user", "system"] }];
  for (const since of BOUNDS) all.push({ since }, { since, role: "user" });
  for (const until of BOUNDS) all.push({ until });
  for (const since of BOUNDS) for (const until of BOUNDS) all.push({ since, until });
  return all;
}

test("the SQL filter never leaves out a message the search's own filter accepts, and decides a canonical time alike", () => {
  const db = new Database(":memory:");
  try {
    db.exec("CREATE TABLE messages (seq INTEGER PRIMARY KEY, role TEXT, created_at TEXT)");
    const insert = db.prepare("INSERT INTO messages (role, created_at) VALUES (?, ?)");
    const rows = STORED.flatMap((at) => ["user", "assistant"].map((role) => ({ role, at })));
    for (const { role, at } of rows) insert.run(role, at);
    for (const options of plans()) {
      const plan = searchPlan(options);
      // Bounds of an extended year alone leave nothing to SQL: every row passes it.
      const filter = filterSql(plan) ?? { where: "1", params: [] };
      const bounds = [plan.since, plan.until].filter((bound) => bound !== undefined);
      const passed = new Set(
        db
          .prepare(`SELECT seq FROM messages m WHERE ${filter.where}`)
          .pluck()
          .all(...filter.params) as number[],
      );
      rows.forEach(({ role, at }, i) => {
        const accepted = passesFilters(plan, role, at);
        const label = `${JSON.stringify(options)} ${role} ${at}`;
        if (accepted) assert.ok(passed.has(i + 1), label);
        // A time as toISOString writes it is decided in SQL exactly as in JavaScript, against bounds of the
        // same form.
        if (canonical(at) && bounds.every(canonical)) assert.equal(passed.has(i + 1), accepted, label);
      });
    }
    assert.equal(filterSql(searchPlan({ limit: 5 })), undefined);
    // An extended year is compared as an instant, not as a string ("+010000" sorts before "2026").
    const later = searchPlan({ since: "+010000-01-01T00:00:00.000Z" });
    assert.equal(passesFilters(later, "user", "2026-01-01T00:00:00.000Z"), false);
    assert.equal(passesFilters(later, "user", "+010001-01-01T00:00:00.000Z"), true);
    const earlier = searchPlan({ until: "+010000-01-01T00:00:00.000Z" });
    assert.equal(passesFilters(earlier, "user", "2026-01-01T00:00:00.000Z"), true);
    const bc = searchPlan({ since: "-000001-01-01T00:00:00.000Z" });
    assert.equal(passesFilters(bc, "user", "0000-06-01T00:00:00.000Z"), true);
  } finally {
    db.close();
  }
});

test("a refused search option names its field in the issues", () => {
  const refused = (
    options: Record<string, unknown>,
    path: string,
    rule: "one_of" | "format" | "type" | "range",
  ) =>
    assertSessionError(() => searchPlan(options as StoreSearchOptions), {
      code: "INVALID_ARGUMENT",
      path,
      rule,
    });
  refused({ match: "some" }, "match", "one_of");
  refused({ until: "yesterday-ish" }, "until", "format");
  refused({ role: 5 }, "role", "type");
  refused({ context: 99 }, "context", "range");
  refused({ vectors: "yes" }, "vectors", "type");
  assertSessionError(
    () => parseQueryText("x".repeat(DEFAULT_QUERY_LIMITS.maxQueryChars + 1), DEFAULT_QUERY_LIMITS),
    {
      code: "INVALID_ARGUMENT",
      path: "query",
      rule: "too_long",
    },
  );
});
