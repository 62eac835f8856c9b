/**
 * The facts' schema steps on SQLite, at the versions they were released with (sqlite/schema.ts merges them with the
 * rest, in version order): the tables of facts, their sources, their FTS5 index and each session's learn mark.
 */
import type { SqlDriver } from "../engines/sqlite/driver.js";
import type { SqliteMigration } from "../engines/sqlite/migration.js";
import { runProgram } from "../engines/sqlite/program.js";
import { forgetDanglingSources } from "./dangling.js";
import { sqliteFacts } from "./sqlite.js";

/** Migration 23: facts, their sources (by session for erasure), their FTS5 index, and each session's learn mark. */
const FACT_TABLES = [
  `CREATE TABLE IF NOT EXISTS agent_facts (
    seq INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    about TEXT,
    observed_at INTEGER NOT NULL,
    producer TEXT NOT NULL,
    status TEXT NOT NULL,
    superseded_by TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (scope, id)
  )`,
  "CREATE INDEX IF NOT EXISTS agent_facts_scope_seq ON agent_facts(scope, seq)",
  `CREATE INDEX IF NOT EXISTS agent_facts_superseded ON agent_facts(scope, superseded_by)
    WHERE superseded_by IS NOT NULL`,
  `CREATE TABLE IF NOT EXISTS agent_fact_sources (
    fact_seq INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (fact_seq, idx)
  ) WITHOUT ROWID`,
  "CREATE INDEX IF NOT EXISTS agent_fact_sources_session ON agent_fact_sources(session_id, fact_seq)",
  `CREATE VIRTUAL TABLE IF NOT EXISTS agent_facts_fts USING fts5(
    text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
  )`,
  `CREATE TABLE IF NOT EXISTS agent_learn_marks (
    session_id TEXT PRIMARY KEY,
    through INTEGER NOT NULL,
    holder TEXT,
    lease_until INTEGER NOT NULL,
    failures INTEGER NOT NULL
  ) WITHOUT ROWID`,
];

/**
 * Migration 24: a fact's sources found by message, for a delete of single messages (`forgetMessageFacts`); an
 * erasure reads the same index by its session prefix, so the session's index of migration 23 goes (one write fewer
 * per source).
 */
const FACT_SOURCE_INDEX = [
  "CREATE INDEX IF NOT EXISTS agent_fact_sources_message ON agent_fact_sources(session_id, message_id)",
  "DROP INDEX IF EXISTS agent_fact_sources_session",
];

/**
 * Migration 26: the fact index merges a level's segments once 4 pile up (FTS5's `crisismerge`, default 16). Facts
 * come a few at a time (a learner's batch), each add a segment of its own, and FTS5's incremental merges keep pace
 * with large writes only: LoCoMo's ~100 adds left 19 segments, which each term of a search reads (4 with this: a
 * fact search ~15 % cheaper, docs/FACTS.md#recall). A setting in the index's own config table.
 */
const FACT_INDEX_MERGE = ["INSERT INTO agent_facts_fts (agent_facts_fts, rank) VALUES ('crisismerge', 4)"];

/**
 * Migration 25: a sealed fact's length in clear (its text column holds the ciphertext, and ranking reads lengths);
 * NULL: stored in clear (store/fact-sealing.ts).
 */
function addFactSealedColumn(driver: SqlDriver): void {
  const columns = driver.column<string>("SELECT name FROM pragma_table_info('agent_facts')");
  if (!columns.includes("sealed_chars"))
    driver.run("ALTER TABLE agent_facts ADD COLUMN sealed_chars INTEGER");
}

/**
 * Migration 27: the sources a fact stored before every write checked them names a message not stored by go, and a
 * fact left without one (sql/facts/dangling.ts).
 */
function forgetDanglingFacts(driver: SqlDriver): void {
  runProgram(driver, forgetDanglingSources(sqliteFacts));
}

/** The facts' steps of SQLite's schema. */
export const SQLITE_FACT_MIGRATIONS: readonly SqliteMigration[] = [
  // Facts learned from the conversations, with their sources, and each session's learn mark.
  { version: 23, statements: FACT_TABLES },
  // A fact's sources by message, so deleting messages drops their sources (and facts left without any).
  { version: 24, statements: FACT_SOURCE_INDEX },
  // Sealed facts (store/fact-sealing.ts): a fact's length in clear when its text is sealed; NULL: stored in clear.
  { version: 25, statements: [], run: addFactSealedColumn },
  // The fact index kept in few segments, so a search reads few.
  { version: 26, statements: FACT_INDEX_MERGE },
  // Facts stored before every write checked its sources (store/fact-sources.ts): a source naming a message not
  // stored goes, and a fact left without one (dangling.ts), so an export of the store imports again.
  { version: 29, statements: [], run: forgetDanglingFacts },
];
