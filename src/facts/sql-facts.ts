/**
 * The fact store of both SQL engines: the base's primitives as the programs of store/sql/facts.ts, run by an
 * engine, which keeps to itself what differs (search candidates, reading a session's messages, the keys).
 */
import type { EntryCandidates } from "../context/store-base.js";
import type { Fact, FactStatus, LearnableMessage, LearnMark } from "../contract/facts.js";
import { SessionError } from "../errors.js";
import type { QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import type { ExportMark, ImportedFact } from "../store/fact-import.js";
import type { FactDraft, FactFilter, ScopeKey } from "../store/facts.js";
import {
  addFacts,
  type FactStatements,
  importFacts,
  markOf,
  one,
  readAll,
  readFact,
  readPage,
  readSeqs,
  setStatus,
} from "../store/sql/facts.js";
import type { Program } from "../store/sql/program.js";
import { type SeqFact, StoreFacts } from "./store-base.js";

/** How one SQL engine runs the fact programs, and what it does its own way. */
export interface FactEngine {
  readonly statements: FactStatements;
  /** Throws `CLOSED` once the store is closed (an engine whose statements refuse by then does nothing). */
  assertOpen(): void;
  /** Runs a program, in one write transaction when `transaction`. */
  run<T>(program: () => Program<T>, transaction: boolean): Promise<T>;
  /** Each term's newest matching facts of the scope passing `filter` (at most `cap`), their lengths, the count. */
  candidates(
    scope: string,
    terms: QueryTerm[],
    cap: number,
    filter: FactFilter,
  ): Promise<EntryCandidates | undefined>;
  /** A session's messages after `after` in store order, their text opened. */
  unlearned(sessionId: string, after: number, limit: number): Promise<LearnableMessage[]>;
  /**
   * True when facts of these owners would be an encrypted owner's content: the store has a keyring, or one of them
   * has a recorded key.
   */
  encrypts(owners: readonly string[]): Promise<boolean>;
}

/** The facts of an SQL store (see the module comment). */
export class SqlFacts extends StoreFacts {
  private readonly s: FactStatements;

  constructor(
    private readonly engine: FactEngine,
    limits?: QueryLimits,
  ) {
    super(limits);
    this.s = engine.statements;
  }

  protected assertOpen(): void {
    this.engine.assertOpen();
  }

  protected async readOwned(owner: string, sessionIds: readonly string[]): Promise<Set<string>> {
    const rows = await this.engine.run(() => one(this.s.owned(owner, sessionIds)), false);
    return new Set(rows.map((r) => String(r.id)));
  }

  // Facts are not sealed yet (docs/FACTS.md): an encrypted owner's are refused, never stored in clear.
  protected override async assertClearWritable(
    scope: ScopeKey,
    sessionIds: readonly string[],
  ): Promise<void> {
    const rows = await this.engine.run(() => one(this.s.owners(sessionIds)), false);
    const owners = new Set(rows.map((r) => String(r.owner)));
    if (scope.owner !== null) owners.add(scope.owner);
    if (owners.size === 0 || !(await this.engine.encrypts([...owners]))) return;
    throw new SessionError(
      "DECRYPT_FAILED",
      "Facts of an encrypted owner are not stored: this store cannot seal facts yet, and never keeps them in clear",
    );
  }

  protected writeFacts(scope: ScopeKey, facts: readonly FactDraft[], now: number): Promise<Fact[]> {
    return this.engine.run(() => addFacts(this.s, scope, facts, now), true);
  }

  protected readFact(scope: ScopeKey, id: string): Promise<Fact | null> {
    return this.engine.run(() => readFact(this.s, scope.key, id), false);
  }

  protected writeStatus(
    scope: ScopeKey,
    id: string,
    status: FactStatus,
    by: string | null,
  ): Promise<boolean> {
    return this.engine.run(() => setStatus(this.s, scope.key, id, status, by), false);
  }

  protected readPage(
    scope: ScopeKey,
    filter: FactFilter,
    before: number | null,
    limit: number,
  ): Promise<SeqFact[]> {
    return this.engine.run(() => readPage(this.s, scope.key, filter, before, limit), false);
  }

  protected readCandidates(
    scope: ScopeKey,
    terms: QueryTerm[],
    cap: number,
    filter: FactFilter,
  ): Promise<EntryCandidates | undefined> {
    return this.engine.candidates(scope.key, terms, cap, filter);
  }

  protected readSeqs(scope: ScopeKey, seqs: readonly number[]): Promise<Map<number, Fact>> {
    return this.engine.run(() => readSeqs(this.s, scope.key, seqs), false);
  }

  protected readUnlearned(sessionId: string, after: number, limit: number): Promise<LearnableMessage[]> {
    return this.engine.unlearned(sessionId, after, limit);
  }

  protected async readAny(): Promise<boolean> {
    return (await this.engine.run(() => one(this.s.any()), false)).length > 0;
  }

  protected async readMark(sessionId: string): Promise<LearnMark | null> {
    return markOf((await this.engine.run(() => one(this.s.mark(sessionId)), false))[0]);
  }

  protected async writeClaim(
    sessionId: string,
    holder: string,
    now: number,
    until: number,
  ): Promise<LearnMark | null> {
    return markOf((await this.engine.run(() => one(this.s.claim(sessionId, holder, now, until)), false))[0]);
  }

  protected async writeAdvance(
    sessionId: string,
    holder: string,
    through: number,
    failures: number,
  ): Promise<boolean> {
    const rows = await this.engine.run(
      () => one(this.s.advance(sessionId, holder, through, failures)),
      false,
    );
    return rows.length > 0;
  }

  protected async writeRelease(sessionId: string, holder: string): Promise<void> {
    await this.engine.run(() => one(this.s.release(sessionId, holder)), false);
  }

  protected readAll(after: ExportMark | null, limit: number): Promise<(SeqFact & { scope: string })[]> {
    return this.engine.run(() => readAll(this.s, after, limit), false);
  }

  protected async readStored(sessionId: string, messageIds: readonly string[]): Promise<Set<string>> {
    const rows = await this.engine.run(() => one(this.s.stored(sessionId, messageIds)), false);
    return new Set(rows.map((r) => String(r.id)));
  }

  protected writeImported(scope: ScopeKey, facts: readonly ImportedFact[]): Promise<number> {
    return this.engine.run(() => importFacts(this.s, scope.key, facts), true);
  }
}
