/**
 * Postgres's facts: the programs of steps.ts over postgres.ts, tsvector candidates (as search entries are
 * found, sql/context-store/: a sealed fact's terms as its owner's blind tokens), and a session's messages read in
 * store order for a learner. What differs from SQLite on purpose (the candidates' plan, reading messages, the keys);
 * the schema steps are postgres-schema.ts.
 */
import type { EntryCandidates } from "../../context/store-base.js";
import type { LearnableMessage } from "../../contract/facts.js";
import { SessionError } from "../../errors.js";
import { storedMessageText } from "../../message/text.js";
import type { BlindTokens } from "../../search/blind-tokens.js";
import type { QueryTerm } from "../../search/query.js";
import type { FactFilter } from "../../store/facts.js";
import type { Executor, Query } from "../engines/postgres/client.js";
import { termTsqueries } from "../engines/postgres/fts.js";
import { runInTransaction, runProgram } from "../engines/postgres/program.js";
import type { Tables } from "../engines/postgres/tables.js";
import type { KeyedTables } from "../sealing/postgres.js";
import { openContents } from "../sealing/postgres-stored-form.js";
import type { FactEngine } from "./engine.js";
import { factTables, postgresFacts, sourcedSql } from "./postgres.js";
import { forgetMessageFacts, forgetSessionFacts } from "./steps.js";

/** What Postgres runs of the facts its own way (see the module comment), for src/facts/sql-facts.ts. */
export function postgresFactEngine(ready: () => Promise<Executor>, t: KeyedTables): FactEngine {
  return {
    statements: postgresFacts(t),
    assertOpen: () => {},
    run: async (program, transaction) => {
      const executor = await ready();
      return transaction ? runInTransaction(executor, program) : runProgram(executor.query, program());
    },
    candidates: async (scope, terms, cap, filter, blinds) =>
      candidates(await ready(), t, scope, terms, cap, filter, blinds),
    unlearned: async (sessionId, after, limit) => unlearned(await ready(), t, sessionId, after, limit),
    withKeys: async (use) => {
      // Every store has keys (a keyless one's answer none): none is a store not made by PostgresStore.
      if (!t.keys) throw new SessionError("STORAGE", "This Postgres store has no keys");
      const executor = await ready();
      return t.keys.run(executor.query.bind(executor), use);
    },
  };
}

/** Drops a session's facts and learn mark, in the caller's transaction (a session deleted or erased). */
export function forgetFacts(query: Query, t: Tables, sessionId: string): Promise<number> {
  return runProgram(query, forgetSessionFacts(postgresFacts(t), sessionId));
}

/**
 * Drops the sources naming deleted messages of the session (null: all its messages, a clear), in the caller's
 * transaction; a fact left without sources goes. How many facts went.
 */
export function forgetMessages(
  query: Query,
  t: Tables,
  sessionId: string,
  messageIds: readonly string[] | null,
): Promise<number> {
  return runProgram(query, forgetMessageFacts(postgresFacts(t), sessionId, messageIds));
}

// One statement: each term's newest matches in the scope with their lengths, and the scope's count.
async function candidates(
  executor: Executor,
  t: Tables,
  scope: string,
  terms: QueryTerm[],
  cap: number,
  filter: FactFilter,
  blinds: readonly BlindTokens[],
): Promise<EntryCandidates | undefined> {
  const { numbers, queries } = termTsqueries(terms, blinds);
  if (numbers.length === 0) return undefined;
  const { facts, sources } = factTables(t);
  // A session's messages (an active path's): the facts sourced among them are found once, by the sources'
  // (session_id, message_id) index, not checked per fact against the list (docs/FACTS.md#recall).
  const onPath = filter.sourcesIn !== undefined && filter.sourceSession !== undefined;
  const sourced = onPath ? "f.seq IN (SELECT fact_seq FROM on_path)" : sourcedSql(sources, "$3", "$6", "$7");
  const where = `f.scope = $3 AND f.status = ANY($5::text[]) AND ${sourced}`;
  const pathCte = `, on_path(fact_seq) AS MATERIALIZED (SELECT DISTINCT s.fact_seq FROM unnest($6::text[]) p(id)
    JOIN ${sources} s ON s.session_id = $7::text AND s.message_id = p.id WHERE s.scope = $3)`;
  const rows = await executor.query<{ i: number; seq: number; chars: number; n: number }>(
    `WITH terms(i, q) AS (SELECT * FROM unnest($1::integer[], $2::tsquery[]))${onPath ? pathCte : ""}
     SELECT t.i, c.seq::float8 AS seq, c.chars, (SELECT count(*) FROM ${facts} f WHERE ${where})::float8 AS n
     FROM terms t CROSS JOIN LATERAL (
       SELECT f.seq, COALESCE(f.sealed_chars, length(f.text) + COALESCE(length(f.about) + 1, 0)) AS chars
       FROM ${facts} f
       WHERE ${where} AND f.search @@ t.q ORDER BY f.seq DESC LIMIT $4
     ) c`,
    [numbers, queries, scope, cap, filter.status, filter.sourcesIn ?? null, filter.sourceSession ?? null],
  );
  if (rows.length === 0) return undefined;
  const matches: number[][] = terms.map(() => []);
  const lengths = new Map<number, number>();
  for (const row of rows) {
    matches[row.i]!.push(Number(row.seq));
    lengths.set(Number(row.seq), Number(row.chars));
  }
  return { matches, lengths, documents: Number(rows[0]?.n ?? lengths.size) };
}

async function unlearned(
  executor: Executor,
  t: Tables,
  sessionId: string,
  after: number,
  limit: number,
): Promise<LearnableMessage[]> {
  const onSession = t.layout.onSession("m", "$4");
  const rows = await executor.query<{ seq: string; id: string; role: string; content: string; at: number }>(
    `SELECT m.seq, m.id, m.role, m.content, (extract(epoch from m.created_at) * 1000)::float8 AS at
     FROM ${t.messages} m WHERE m.session_num = (SELECT num FROM ${t.heads} WHERE session_id = $1)
       AND m.seq > $2${onSession} ORDER BY m.seq LIMIT $3`,
    [sessionId, after, limit, ...t.layout.routeParams(sessionId)],
  );
  const contents = await openContents(
    executor.query,
    t,
    sessionId,
    rows.map((r) => r.content),
    rows.map((r) => r.id),
  );
  return rows.map((row, i) => ({
    seq: Number(row.seq),
    id: row.id,
    role: row.role,
    text: storedMessageText(contents[i] ?? ""),
    createdAt: Math.round(Number(row.at)),
  }));
}
