/**
 * SQLite's facts: the programs of sql/facts/steps.ts over sql/facts/sqlite.ts, FTS5 candidates (as search
 * entries are found, context-store.ts: a sealed fact's terms as its owner's blind tokens), and a session's messages
 * read in store order for a learner.
 */
import type { EntryCandidates } from "../context/store-base.js";
import type { FactSource, LearnableMessage } from "../contract/facts.js";
import { SessionError } from "../errors.js";
import { SqlFacts } from "../facts/sql-facts.js";
import { storedMessageText } from "../message/text.js";
import type { BlindTokens } from "../search/blind-tokens.js";
import type { QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import { contentSql, resolveContent } from "../sql/engines/sqlite/chunks.js";
import type { SqlDriver, SqlValue } from "../sql/engines/sqlite/driver.js";
import { foldsToNothing, toFts5 } from "../sql/engines/sqlite/fts.js";
import { runInTransaction, runProgram } from "../sql/engines/sqlite/program.js";
import { forgetDanglingSources } from "../sql/facts/dangling.js";
import { addSource, type StoredFact, storedFacts } from "../sql/facts/reads.js";
import { FACT_COLUMNS, sourcedSql, sqliteFacts } from "../sql/facts/sqlite.js";
import { SqliteFactVectors } from "../sql/facts/sqlite-vectors.js";
import { forgetMessageFacts, forgetSessionFacts } from "../sql/facts/steps.js";
import type { Row } from "../sql/program.js";
import type { FactFilter } from "../store/facts.js";

/** Migration 23: facts, their sources (by session for erasure), their FTS5 index, and each session's learn mark. */
export const FACT_TABLES = [
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
export const FACT_SOURCE_INDEX = [
  "CREATE INDEX IF NOT EXISTS agent_fact_sources_message ON agent_fact_sources(session_id, message_id)",
  "DROP INDEX IF EXISTS agent_fact_sources_session",
];

/**
 * Migration 26: the fact index merges a level's segments once 4 pile up (FTS5's `crisismerge`, default 16). Facts
 * come a few at a time (a learner's batch), each add a segment of its own, and FTS5's incremental merges keep pace
 * with large writes only: LoCoMo's ~100 adds left 19 segments, which each term of a search reads (4 with this: a
 * fact search ~15 % cheaper, docs/FACTS.md#recall). A setting in the index's own config table.
 */
export const FACT_INDEX_MERGE = [
  "INSERT INTO agent_facts_fts (agent_facts_fts, rank) VALUES ('crisismerge', 4)",
];

/**
 * Migration 25: a sealed fact's length in clear (its text column holds the ciphertext, and ranking reads lengths);
 * NULL: stored in clear (store/fact-sealing.ts).
 */
export function addFactSealedColumn(driver: SqlDriver): void {
  const columns = driver.column<string>("SELECT name FROM pragma_table_info('agent_facts')");
  if (!columns.includes("sealed_chars"))
    driver.run("ALTER TABLE agent_facts ADD COLUMN sealed_chars INTEGER");
}

/**
 * Migration 27: the sources a fact stored before every write checked them names a message not stored by go, and a
 * fact left without one (sql/facts/dangling.ts).
 */
export function forgetDanglingFacts(driver: SqlDriver): void {
  runProgram(driver, forgetDanglingSources(sqliteFacts));
}

/** SQLite's facts (see the module comment). */
export class SqliteFacts extends SqlFacts {
  constructor(driver: SqlDriver, limits: QueryLimits) {
    super(
      {
        statements: sqliteFacts,
        assertOpen: () => {},
        run: async (program, transaction) =>
          transaction ? runInTransaction(driver, program) : runProgram(driver, program()),
        // A search's reads on one snapshot each (the count and the terms; the facts and their sources): outside a
        // transaction every statement takes and drops its own read lock, ~6 µs each (driver.ts `read`).
        candidates: async (scope, terms, cap, filter, blinds) =>
          driver.read(() => candidates(driver, scope, terms, cap, filter, blinds)),
        unlearned: async (sessionId, after, limit) => unlearned(driver, sessionId, after, limit),
        readSeqs: async (scope, seqs) => driver.read(() => factsOfSeqs(driver, scope, seqs)),
        withKeys: async (use) => {
          // Every store has keys (a keyless one's answer none): none is a store not made by SqliteStore.
          if (!driver.keys) throw new SessionError("STORAGE", "This SQLite connection has no keys");
          return use(driver.keys);
        },
      },
      limits,
    );
    this.vectors = new SqliteFactVectors(driver);
  }
}

/** Drops a session's facts and learn mark, in the caller's transaction (a session deleted or erased). */
export function forgetFacts(driver: SqlDriver, sessionId: string): number {
  return runProgram(driver, forgetSessionFacts(sqliteFacts, sessionId));
}

/**
 * Drops the sources naming deleted messages of the session (null: all its messages, a clear), in the caller's
 * transaction; a fact left without sources goes. How many facts went.
 */
export function forgetMessages(
  driver: SqlDriver,
  sessionId: string,
  messageIds: readonly string[] | null,
): number {
  return runProgram(driver, forgetMessageFacts(sqliteFacts, sessionId, messageIds));
}

// The statuses as bound values, not a JSON list: `IN (SELECT value FROM json_each(?))` was checked against every
// match of every term (with a bloom filter built per statement), ~18 % of a fact search's term reads on LoCoMo.
function filterSql(filter: FactFilter): { sql: string; params: string[] } {
  const sourced = sourcedSql("a", filter);
  const status =
    filter.status.length === 1
      ? " AND a.status = ?"
      : ` AND a.status IN (${filter.status.map(() => "?").join(", ")})`;
  return { sql: `${status}${sourced.sql}`, params: [...filter.status, ...sourced.params] };
}

// Each term's newest matches in the scope (filtered inside the window, as search entries are by label).
function candidates(
  driver: SqlDriver,
  scope: string,
  terms: QueryTerm[],
  cap: number,
  filter: FactFilter,
  blinds: readonly BlindTokens[],
): EntryCandidates | undefined {
  const where = filterSql(filter);
  // The scope's count first (BM25 needs it): a scope without facts (a session's own, where its owner's hold them)
  // then reads no term.
  const documents = driver.get<{ n: number }>(
    `SELECT count(*) AS n FROM agent_facts a WHERE a.scope = ?${where.sql}`,
    [scope, ...where.params],
  )?.n;
  if (!documents) return undefined;
  // Each match with its length, read from the row the filter reads anyway: in code points, as the memory store counts
  // its search text (about, a newline, the text); a sealed fact's as it was written. One JSON value per term (seq,
  // length, ...), as the message term reads (search/weights.ts): a row each cost a speaker's name, which most of a
  // scope's facts hold, a quarter more (LoCoMo: ~130 against ~97 µs for 205 matches).
  const lengths = new Map<number, number>();
  const matches = terms.map((term) => {
    if (foldsToNothing([term])) return [];
    const [json] = driver.column<string | null>(
      `SELECT '[' || group_concat(seq || ',' || chars) || ']' FROM (
         SELECT f.rowid AS seq, COALESCE(a.sealed_chars, length(a.text) + COALESCE(length(a.about) + 1, 0)) AS chars
         FROM agent_facts_fts f JOIN agent_facts a ON a.seq = f.rowid
         WHERE agent_facts_fts MATCH ? AND a.scope = ?${where.sql} ORDER BY f.rowid DESC LIMIT ?)`,
      [toFts5([term], "text", undefined, blinds), scope, ...where.params, cap],
    );
    const pairs = json ? (JSON.parse(json) as number[]) : [];
    const seqs: number[] = [];
    for (let k = 0; k < pairs.length; k += 2) {
      seqs.push(pairs[k]!);
      lengths.set(pairs[k]!, pairs[k + 1]!);
    }
    return seqs;
  });
  if (lengths.size === 0) return undefined;
  return { matches, lengths, documents };
}

const FACT_FIELDS = FACT_COLUMNS.split(", ");

// The facts of these seqs in the scope with their sources, the statements of fact-reads.ts read as arrays: the row
// objects the driver builds cost half the read (30 facts of a search: ~155 against ~90 µs on a loaded machine).
function factsOfSeqs(driver: SqlDriver, scope: string, seqs: readonly number[]): StoredFact[] {
  if (seqs.length === 0) return [];
  const read = sqliteFacts.bySeqs(scope, seqs);
  const rows = driver.tuples<unknown[]>(read.sql, read.params as SqlValue[]).map((values) => {
    const row: Row = {};
    FACT_FIELDS.forEach((field, i) => {
      row[field] = values[i];
    });
    return row;
  });
  if (rows.length === 0) return [];
  const sources = new Map<number, FactSource[]>();
  const of = sqliteFacts.sourcesOf(scope, seqs);
  for (const [seq, sessionId, messageId] of driver.tuples<[number, string, string]>(
    of.sql,
    of.params as SqlValue[],
  ))
    addSource(sources, Number(seq), String(sessionId), String(messageId));
  return storedFacts(rows, sources);
}

function unlearned(driver: SqlDriver, sessionId: string, after: number, limit: number): LearnableMessage[] {
  const rows = driver.all<{ seq: number; id: string; role: string; content: unknown; created_at: string }>(
    // No index of its own (one more on every append, for a reader in the background): the session's range of the
    // (session, id) index, whose entries carry the row's seq, is read whole and only the rows after the mark are
    // fetched, so a read costs the session's index entries, not its rows.
    `SELECT m.seq, m.id, m.role, ${contentSql("m")} AS content, m.created_at
     FROM agent_messages m INDEXED BY agent_messages_session_id
     WHERE m.session_num = (SELECT num FROM agent_session_heads WHERE session_id = ?) AND m.seq > ?
     ORDER BY m.seq LIMIT ?`,
    [sessionId, after, limit],
  );
  return rows.map((row) => ({
    seq: Number(row.seq),
    id: row.id,
    role: row.role,
    text: storedMessageText(resolveContent(driver, row.content, sessionId, row.id)),
    createdAt: Date.parse(row.created_at),
  }));
}
