// A search of a store without facts reads no more statements than before facts existed (issue #88): the store's
// "no facts" answer is kept (search/facts.ts mayHoldFacts) until the store writes a fact itself or FACTS_RECHECK_MS
// passed, so a fact another store object (another process) writes first is searched at most that late.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mock, test } from "node:test";
import { PostgresStore } from "../src/postgres/store.js";
import { FACTS_RECHECK_MS } from "../src/search/facts.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { fact } from "../src/testing/contract/facts-harness.js";
import { msg } from "../src/testing/contract/harness.js";
import { newPGlite } from "./fixtures/pglite.js";
import { pgliteSwitchedOff } from "./fixtures/postgres-db.js";

const Database = loadBetterSqlite3();

/** What each engine's case gives the shared checks: two stores on one database, and the first one's statements. */
interface Place {
  store: SqliteStore | PostgresStore;
  other: SqliteStore | PostgresStore;
  statements: () => number;
  close: () => Promise<void>;
}

// Statements of a warm search of one session as before facts existed, counted as here (every statement SQLite runs,
// its read transaction's too; every query PGlite is sent).
const WARM_SEARCH = { SQLite: 6, PGlite: 3 };

async function sqlitePlace(): Promise<Place> {
  const dir = mkdtempSync(join(tmpdir(), "fact-presence-"));
  let statements = 0;
  const db = new Database(join(dir, "s.db"), { verbose: () => statements++ });
  const store = new SqliteStore(db);
  const other = new SqliteStore(join(dir, "s.db"));
  return {
    store,
    other,
    statements: () => statements,
    close: async () => {
      await store.close();
      await other.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function pglitePlace(): Promise<Place> {
  const db = await newPGlite();
  let statements = 0;
  for (const method of ["query", "exec"] as const) {
    const original = db[method].bind(db) as (...args: unknown[]) => unknown;
    (db as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      statements++;
      return original(...args);
    };
  }
  const store = new PostgresStore(db);
  const other = new PostgresStore(db);
  return { store, other, statements: () => statements, close: () => db.close() };
}

const search = (store: Place["store"], facts: boolean | "hits" = "hits") =>
  store.searchMessages("harbour", { sessionId: "s", limit: 5, facts } as {
    sessionId: string;
    facts: "hits";
  });
const factHits = async (store: Place["store"]) =>
  (await search(store)).filter((hit) => "kind" in hit && hit.kind === "fact").length;

for (const [engine, open, skip] of [
  ["SQLite", sqlitePlace, null],
  ["PGlite", pglitePlace, pgliteSwitchedOff()],
] as const) {
  test(`${engine}: a warm search without facts reads as many statements as one that leaves facts out`, {
    skip: skip ?? false,
  }, async () => {
    const place = await open();
    try {
      for (let i = 0; i < 4; i++) await place.store.session("s").appendMessage(msg(`m${i}`, `harbour ${i}`));
      // Warm: statements prepared, the search index caught up, the store found without facts.
      for (let i = 0; i < 3; i++) await search(place.store);
      const count = async (facts: boolean | "hits") => {
        const before = place.statements();
        await search(place.store, facts);
        return place.statements() - before;
      };
      const without = await count(false);
      assert.equal(without, WARM_SEARCH[engine], "a warm search leaving facts out");
      assert.equal(await count("hits"), without, "a warm search of a store without facts");
      assert.equal(await count(true), without);
    } finally {
      await place.close();
    }
  });

  test(`${engine}: a fact this store writes is searched at once, one another store writes within FACTS_RECHECK_MS`, {
    skip: skip ?? false,
  }, async () => {
    const place = await open();
    mock.timers.enable({ apis: ["Date"], now: Date.now() });
    try {
      const session = place.store.session("s");
      for (let i = 0; i < 2; i++) await session.appendMessage(msg(`m${i}`, `harbour ${i}`));
      assert.equal(await factHits(place.store), 0);
      // Written by this store: its next search looks again.
      await place.store.facts.add({ sessionId: "s" }, [fact("The harbour opens at six.", [["s", "m0"]])]);
      assert.equal(await factHits(place.store), 1);

      const fresh = await open();
      try {
        await fresh.store.session("s").appendMessage(msg("m0", "harbour 0"));
        assert.equal(await factHits(fresh.store), 0);
        // Written by another store on the same database (another process): found once the re-check is due.
        await fresh.other.facts.add({ sessionId: "s" }, [fact("The harbour opens at six.", [["s", "m0"]])]);
        mock.timers.tick(FACTS_RECHECK_MS);
        assert.equal(await factHits(fresh.store), 1);
      } finally {
        await fresh.close();
      }
    } finally {
      mock.timers.reset();
      await place.close();
    }
  });
}
