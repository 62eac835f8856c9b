/**
 * Facts (contract/facts.ts) written once for both SQL engines: the steps of each write over a statement table per
 * engine (sqlite.ts, postgres.ts beside this file), as kept streams are (streams.ts); the reads
 * are fact-reads.ts.
 * Search candidates differ by engine (FTS5 or tsvector) and stay in each engine's store file (sqlite-store.ts,
 * postgres-store.ts); ranking is shared (facts/store-base.ts). A session's erasure runs {@link forgetSessionFacts} in its
 * transaction (erase.ts), a delete of messages {@link forgetMessageFacts} in its own.
 */
import type { Fact, FactSource, FactStatus, LearnMark } from "../../contract/facts.js";
import { SessionError } from "../../errors.js";
import { GuardRefused, type OwnerWrite } from "../../store/crypto/write-guard.js";
import { successorsOf } from "../../store/fact-chains.js";
import { assertSourcesHeld, sourcesBySession } from "../../store/fact-sources.js";
import type { FactDraft, FactFilter, ScopeKey } from "../../store/facts.js";
import { countOf, type Program, type Row, type Statement, type Step } from "../program.js";

/** One engine's statements of facts (tables facts, fact sources, learn marks; and the engine's text index). */
export interface FactStatements {
  /** Which of `sessionIds` are registered to `owner`: rows `id`. */
  owned(owner: string, sessionIds: readonly string[]): Statement;
  /** Which of `ids` the scope holds: rows `id`. */
  taken(scope: string, ids: readonly string[]): Statement;
  /**
   * The key the scope's facts are written under and its guard (crypto/write-guard.ts), looked up in the program's
   * transaction (`fresh`: the owner's check read again, not taken from a cache): one row `{ write }`.
   * `DECRYPT_FAILED` (naming `where`) where the store lacks a key the owner has.
   */
  writeKey(scope: ScopeKey, where: string, fresh: boolean): Step;
  /**
   * A fact's row inserted (and indexed, where the engine indexes in the row), current unless `state`; sealed under
   * `write.key` with its index the key's blind tokens (store/fact-sealing.ts), in clear when null, only while the
   * owner's key is still as `write.guard` found it: rows `seq`, none when the guard refused it.
   */
  insert(scope: string, fact: FactDraft, now: number, write: OwnerWrite, state?: FactState): Statement;
  /** The fact `seq` indexed for search (blind under `key`), where the engine keeps its index apart (SQLite's FTS5). */
  index?(seq: number, fact: FactDraft, key: Uint8Array | null): Statement;
  /** A fact's sources inserted, in order. */
  sources(scope: string, seq: number, sources: readonly FactSource[]): Step;
  /** The fact `id` of the scope: a fact row. */
  byId(scope: string, id: string): Statement;
  /** A current fact's status set: rows for the fact moved. */
  status(scope: string, id: string, status: FactStatus, by: string | null): Statement;
  /** At most `limit` fact rows of the scope passing `filter`, before `before` in store order, newest first. */
  page(scope: string, filter: FactFilter, before: number | null, limit: number): Statement;
  /** The fact rows of these seqs in the scope. */
  bySeqs(scope: string, seqs: readonly number[]): Statement;
  /** The sources of these facts of the scope: rows `fact_seq, session_id, message_id`, in order. */
  sourcesOf(scope: string, seqs: readonly number[]): Statement;
  /** One row when the store holds any fact, none when it holds none. */
  any(): Statement;
  /** At most `limit` fact rows of the store after `after` (null: the first) by scope key, then store order. */
  all(after: { scope: string; seq: number } | null, limit: number): Statement;
  /**
   * Which of `messageIds` the session holds: rows `id`; with `lock`, each row found locked against its delete until
   * the transaction ends (Postgres's `FOR KEY SHARE`; SQLite's write transaction holds the whole file).
   */
  stored(sessionId: string, messageIds: readonly string[], lock?: boolean): Statement;
  /** At most `limit` sessions the sources name, after `after` (null: from the first) in id order: rows `session_id`. */
  sourceSessions(after: string | null, limit: number): Statement;
  /** The distinct messages of the session the sources name: rows `message_id`. */
  sourceMessages(sessionId: string): Statement;
  /** The session's learn mark: a mark row. */
  mark(sessionId: string): Statement;
  /** The lease taken when free, expired at `now` or already the holder's: the mark row, none when refused. */
  claim(sessionId: string, holder: string, now: number, until: number): Statement;
  /** The mark moved while `holder` holds it: rows for the mark moved. */
  advance(sessionId: string, holder: string, through: number, failures: number): Statement;
  /** The lease ended by its holder. */
  release(sessionId: string, holder: string): Statement;
  /** The facts with a source in the session, whatever their scope: rows `seq, scope, id, status, superseded_by`. */
  sessionFacts(sessionId: string): Statement;
  /**
   * The facts with a source among the session's messages `messageIds` (null: any message of the session), by the
   * sources' `(session_id, message_id)` index: rows `seq, scope, id, status, superseded_by, kept` (`kept`: how many
   * of its sources are not).
   */
  messageFacts(sessionId: string, messageIds: readonly string[] | null): Statement;
  /** The sources naming the session's messages `messageIds` (null: any of its messages) deleted. */
  dropSources(sessionId: string, messageIds: readonly string[] | null): Statement;
  /** Facts (their rows, sources and index) deleted: `seqs[i]` of scope `scopes[i]`. */
  drop(scopes: readonly string[], seqs: readonly number[]): Step;
  /** Facts of `scopes[i]` superseded by `ids[i]` made current again. */
  restore(scopes: readonly string[], ids: readonly string[]): Statement;
  /** Facts of `scopes[i]` superseded by `ids[i]` superseded by `successors[i]` instead. */
  relink(scopes: readonly string[], ids: readonly string[], successors: readonly string[]): Statement;
  /** The session's learn mark deleted. */
  dropMark(sessionId: string): Statement;
}

/** A fact's stored state, as an import writes it. */
export interface FactState {
  status: FactStatus;
  supersededBy: string | null;
}

/** A learn mark from its row, or null. */
export function markOf(row: Row | undefined): LearnMark | null {
  if (!row) return null;
  return {
    through: Number(row.through),
    holder: row.holder === null || row.holder === undefined ? null : String(row.holder),
    leaseUntil: Number(row.lease_until),
    failures: Number(row.failures),
  };
}

// The scope's key and guard, looked up in the program's transaction (FactStatements.writeKey).
function* writeKeyOf(s: FactStatements, scope: ScopeKey, where: string, fresh: boolean): Program<OwnerWrite> {
  const [row] = yield s.writeKey(scope, where, fresh);
  return row?.write as OwnerWrite;
}

// A fact's row inserted under its guard: its seq, `GuardRefused` (the transaction rolls back) when the owner's key
// changed since the look-up.
function* insertGuarded(
  s: FactStatements,
  scope: string,
  fact: FactDraft,
  now: number,
  write: OwnerWrite,
  state?: FactState,
): Program<number> {
  const rows = yield s.insert(scope, fact, now, write, state);
  if (rows.length === 0) throw new GuardRefused(`fact "${fact.id}"`);
  return countOf(rows, "seq");
}

/**
 * Stores checked facts, all or none (run in one transaction), sealed under the scope owner's key looked up in the
 * transaction (`fresh`: read again; `where` names the facts for a refusal), in clear without one: `CONFLICT` when
 * an id is taken in the scope, `INVALID_ARGUMENT` when a source is not stored (fact `i` named `paths[i]`),
 * `GuardRefused` when the owner's key changed before the insert.
 */
export function* addFacts(
  s: FactStatements,
  scope: ScopeKey,
  facts: readonly FactDraft[],
  now: number,
  where: string,
  fresh: boolean,
  paths: readonly string[],
): Program<Fact[]> {
  const write = yield* writeKeyOf(s, scope, where, fresh);
  const taken = yield s.taken(
    scope.key,
    facts.map((f) => f.id),
  );
  if (taken.length > 0) {
    throw new SessionError("CONFLICT", `Fact "${String(taken[0]?.id)}" already exists in this scope`);
  }
  yield* insertFacts(s, scope.key, facts, paths, write, () => ({ now, state: undefined }));
  return facts.map((fact) => ({
    ...fact,
    sources: fact.sources.map((src) => ({ ...src })),
    owner: scope.owner,
    sessionId: scope.sessionId,
    status: "current",
    supersededBy: null,
    createdAt: now,
  }));
}

/**
 * Stores imported facts with their state (all or none: run in one transaction), sealed as {@link addFacts} seals,
 * but those whose id the scope holds; how many were stored. A source not stored is refused as by {@link addFacts}.
 */
export function* importFacts(
  s: FactStatements,
  scopeKey: ScopeKey,
  facts: readonly (FactDraft & FactState & { createdAt: number })[],
  where: string,
  fresh: boolean,
  paths: readonly string[],
): Program<number> {
  const write = yield* writeKeyOf(s, scopeKey, where, fresh);
  const scope = scopeKey.key;
  const taken = new Set(
    (yield s.taken(
      scope,
      facts.map((f) => f.id),
    )).map((r) => String(r.id)),
  );
  const kept = facts.flatMap((fact, i) => (taken.has(fact.id) ? [] : [{ fact, path: paths[i] ?? "" }]));
  yield* insertFacts(
    s,
    scope,
    kept.map((k) => k.fact),
    kept.map((k) => k.path),
    write,
    (fact) => ({ now: fact.createdAt, state: fact }),
  );
  return kept.length;
}

/**
 * Every write of fact rows: the facts' sources read among the stored messages, one statement per source session,
 * locked against a delete until the transaction ends (store/fact-sources.ts: a source is a stored message, and
 * the delete that removes it later finds the fact), then each fact's row, index and sources.
 */
function* insertFacts<F extends FactDraft>(
  s: FactStatements,
  scope: string,
  facts: readonly F[],
  paths: readonly string[],
  write: OwnerWrite,
  stateOf: (fact: F) => { now: number; state: FactState | undefined },
): Program<void> {
  const held = new Map<string, Set<string>>();
  for (const [sessionId, ids] of sourcesBySession(facts)) {
    held.set(sessionId, new Set((yield s.stored(sessionId, ids, true)).map((r) => String(r.id))));
  }
  assertSourcesHeld(facts, held, paths);
  for (const fact of facts) {
    const { now, state } = stateOf(fact);
    const seq = yield* insertGuarded(s, scope, fact, now, write, state);
    if (s.index) yield s.index(seq, fact, write.key);
    yield s.sources(scope, seq, fact.sources);
  }
}

/** Sets a current fact's status; false when it is not current (or not of the scope). */
export function* setStatus(
  s: FactStatements,
  scope: string,
  id: string,
  status: FactStatus,
  by: string | null,
): Program<boolean> {
  return (yield s.status(scope, id, status, by)).length > 0;
}

/**
 * Fact `id` of the scope deleted whatever its status, in the caller's transaction, with its sources and index rows
 * (its vector is a column of its row); a fact it had superseded is re-linked or current again, as in an erasure.
 */
export function* deleteFact(s: FactStatements, scope: string, id: string): Program<boolean> {
  const [row] = yield s.byId(scope, id);
  if (row === undefined) return false;
  yield s.drop([scope], [Number(row.seq)]);
  yield* reattach(s, [row]);
  return true;
}

/** One statement's rows (a mark read, a claim, an advance, a release, an ownership read). */
export function* one(step: Step): Program<Row[]> {
  return yield step;
}

/**
 * A session's erasure of facts, in the caller's transaction: every fact with a source in it goes, whatever its
 * scope, with its sources and index rows; a fact one of them superseded is re-linked to the next fact of its chain
 * that stays, else current again (the later word is gone);
 * the session's learn mark goes. How many facts went.
 */
export function* forgetSessionFacts(s: FactStatements, sessionId: string): Program<number> {
  const rows = yield s.sessionFacts(sessionId);
  yield s.dropMark(sessionId);
  if (rows.length === 0) return 0;
  const seqs = rows.map((r) => Number(r.seq));
  yield s.drop(
    rows.map((r) => String(r.scope)),
    seqs,
  );
  yield* reattach(s, rows);
  return seqs.length;
}

/**
 * What the removed facts `rows` had superseded: re-linked to the next fact of its chain that stays, else current
 * again (store/fact-chains.ts). The re-link is a statement of its own, run only when a removed fact was superseded by
 * one that stays.
 */
function* reattach(s: FactStatements, rows: readonly Row[]): Program<void> {
  const removed = rows.map((r) => ({
    scope: String(r.scope),
    id: String(r.id),
    status: String(r.status),
    supersededBy: r.superseded_by === null || r.superseded_by === undefined ? null : String(r.superseded_by),
  }));
  const successors = successorsOf(removed);
  const relinked = removed.flatMap((fact, i) => {
    const next = successors[i];
    return next === null || next === undefined ? [] : [{ ...fact, next }];
  });
  const restored = removed.filter((_, i) => successors[i] === null);
  if (relinked.length > 0) {
    yield s.relink(
      relinked.map((f) => f.scope),
      relinked.map((f) => f.id),
      relinked.map((f) => f.next),
    );
  }
  yield s.restore(
    restored.map((f) => f.scope),
    restored.map((f) => f.id),
  );
}

/**
 * Messages deleted (`messageIds` of the session; null: all of them, a clear), in the caller's transaction: a fact
 * whose every source is among them goes, with its index rows, and a fact it had superseded is re-linked or current
 * again (as in an erasure); the others keep their remaining sources. Costs the deleted messages' range of the sources' index,
 * not the store's facts. How many facts went.
 */
export function* forgetMessageFacts(
  s: FactStatements,
  sessionId: string,
  messageIds: readonly string[] | null,
): Program<number> {
  if (messageIds?.length === 0) return 0;
  const rows = yield s.messageFacts(sessionId, messageIds);
  if (rows.length === 0) return 0;
  const gone = rows.filter((r) => Number(r.kept) === 0);
  if (gone.length > 0) {
    yield s.drop(
      gone.map((r) => String(r.scope)),
      gone.map((r) => Number(r.seq)),
    );
    yield* reattach(s, gone);
  }
  if (gone.length < rows.length) yield s.dropSources(sessionId, messageIds);
  return gone.length;
}
