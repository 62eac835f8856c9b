/**
 * SQLite's facts: the programs of steps.ts over sqlite.ts, FTS5 candidates (as search entries are found,
 * sql/context-store/: a sealed fact's terms as its owner's blind tokens), and a session's messages read in store
 * order for a learner. What differs from Postgres on purpose (the candidates' plan, reading messages, the keys);
 * the schema steps are sqlite-schema.ts.
 */
import type { EntryCandidates } from "../../context/store-base.js";
import type { FactSource, LearnableMessage } from "../../contract/facts.js";
import { SessionError } from "../../errors.js";
import { storedMessageText } from "../../message/text.js";
import type { BlindTokens } from "../../search/blind-tokens.js";
import type { QueryTerm } from "../../search/query.js";
import type { FactFilter } from "../../store/facts.js";
import { contentSql, resolveContent } from "../engines/sqlite/chunks.js";
import type { SqlDriver, SqlValue } from "../engines/sqlite/driver.js";
import { foldsToNothing, toFts5 } from "../engines/sqlite/fts.js";
import { runInTransaction, runProgram } from "../engines/sqlite/program.js";
import type { Row } from "../program.js";
import type { FactEngine } from "./engine.js";
import { addSource, type StoredFact, storedFacts } from "./reads.js";
import { FACT_COLUMNS, sourcedSql, sqliteFacts } from "./sqlite.js";
import { forgetMessageFacts, forgetSessionFacts } from "./steps.js";

/** What SQLite runs of the facts its own way (see the module comment), for src/facts/sql-facts.ts. */
export function sqliteFactEngine(driver: SqlDriver): FactEngine {
  return {
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
  };
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
