/**
 * The reads of facts (sql/facts/steps.ts has the writes and the statement table): rows as stored, with their
 * sources, a sealed row's text left sealed and marked so (facts/sql-facts.ts opens it with the owner's key, outside
 * the program: the key look-up is an engine's own).
 */
import type { Fact, FactSource, FactStatus } from "../../contract/facts.js";
import type { FactFilter } from "../../store/facts.js";
import { scopeOfKey } from "../../store/facts.js";
import type { Program, Row } from "../program.js";
import type { FactStatements } from "./steps.js";

/** A fact as stored, in store order: `sealed` when its text is sealed (its `about` then reads null). */
export interface StoredFact {
  seq: number;
  fact: Fact;
  sealed: boolean;
}

/** A stored fact from its row (`sealed_chars` non-null: sealed) and its sources. */
export function factOf(row: Row, sources: readonly FactSource[]): { fact: Fact; sealed: boolean } {
  const scope = scopeOfKey(String(row.scope));
  const fact: Fact = {
    id: String(row.id),
    text: String(row.text),
    about: row.about === null || row.about === undefined ? null : String(row.about),
    observedAt: Number(row.observed_at),
    producer: String(row.producer),
    sources: sources.map((s) => ({ ...s })),
    owner: scope.owner,
    sessionId: scope.sessionId,
    status: String(row.status) as FactStatus,
    supersededBy:
      row.superseded_by === null || row.superseded_by === undefined ? null : String(row.superseded_by),
    createdAt: Number(row.created_at),
  };
  return { fact, sealed: row.sealed_chars !== null && row.sealed_chars !== undefined };
}

/** Fact rows with their sources (one read of the sources for all), in the rows' order. */
export function* withSources(s: FactStatements, scope: string, rows: readonly Row[]): Program<StoredFact[]> {
  if (rows.length === 0) return [];
  const sources = new Map<number, FactSource[]>();
  for (const r of yield s.sourcesOf(
    scope,
    rows.map((r) => Number(r.seq)),
  ))
    addSource(sources, Number(r.fact_seq), String(r.session_id), String(r.message_id));
  return storedFacts(rows, sources);
}

/** Adds a source to its fact's list in `sources` (by the fact's seq), in the order they come. */
export function addSource(
  sources: Map<number, FactSource[]>,
  seq: number,
  sessionId: string,
  messageId: string,
): void {
  let list = sources.get(seq);
  if (!list) {
    list = [];
    sources.set(seq, list);
  }
  list.push({ sessionId, messageId });
}

/** Fact rows with their sources by seq, in the rows' order. */
export function storedFacts(rows: readonly Row[], sources: ReadonlyMap<number, FactSource[]>): StoredFact[] {
  return rows.map((row) => {
    const seq = Number(row.seq);
    return { seq, ...factOf(row, sources.get(seq) ?? []) };
  });
}

/** At most `limit` facts of the store after `after`, by scope then store order (a scope's sources read at once). */
export function* readAll(
  s: FactStatements,
  after: { scope: string; seq: number } | null,
  limit: number,
): Program<(StoredFact & { scope: string })[]> {
  const rows = yield s.all(after, limit);
  const byScope = new Map<string, Row[]>();
  for (const row of rows) byScope.set(String(row.scope), [...(byScope.get(String(row.scope)) ?? []), row]);
  const found: (StoredFact & { scope: string })[] = [];
  for (const [scope, list] of byScope) {
    for (const stored of yield* withSources(s, scope, list)) found.push({ scope, ...stored });
  }
  return found; // the rows' order: scopes came in order, each scope's rows in store order
}

/** The fact `id` of the scope, or null. */
export function* readFact(s: FactStatements, scope: string, id: string): Program<StoredFact | null> {
  const rows = yield s.byId(scope, id);
  const [found] = yield* withSources(s, scope, rows.slice(0, 1));
  return found ?? null;
}

/** A page of the scope's facts, newest first. */
export function* readPage(
  s: FactStatements,
  scope: string,
  filter: FactFilter,
  before: number | null,
  limit: number,
): Program<StoredFact[]> {
  return yield* withSources(s, scope, yield s.page(scope, filter, before, limit));
}

/** The facts of these seqs in the scope. */
export function* readSeqs(s: FactStatements, scope: string, seqs: readonly number[]): Program<StoredFact[]> {
  if (seqs.length === 0) return [];
  return yield* withSources(s, scope, yield s.bySeqs(scope, seqs));
}
