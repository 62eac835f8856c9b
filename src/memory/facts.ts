/**
 * The memory store's facts: rows in maps, scanned in full by each read (the memory store's way: brute force over
 * what it holds), and the learner's marks (learn-marks.ts). Erasing a session drops every fact with a source in it
 * (see {@link MemoryFacts.forgetSession}).
 */
import type { EntryCandidates } from "../context/store-base.js";
import type { Fact, LearnableMessage, LearnMark } from "../contract/facts.js";
import { SessionError } from "../errors.js";
import { type SeqFact, StoreFacts } from "../facts/store-base.js";
import type { QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import { successorsOf } from "../store/fact-chains.js";
import type { ExportMark, ImportedFact } from "../store/fact-import.js";
import { assertSourcesHeld, sourcesBySession } from "../store/fact-sources.js";
import type { FactDraft, FactFilter, ScopeKey } from "../store/facts.js";
import type { MemorySessionData } from "./data.js";
import { candidatesOf, copy, FactsBySession, type Kept, passes, restore } from "./fact-rows.js";
import { MemoryFactVectors } from "./fact-vectors.js";
import { MemoryLearnMarks } from "./learn-marks.js";

/** What the facts need of the memory store. */
export interface MemoryFactsHost {
  assertOpen(): void;
  sessionData(sessionId: string, create: boolean): MemorySessionData | undefined;
  ownedIds(owner: string): ReadonlySet<string>;
}

/** Facts held in process memory. */
export class MemoryFacts extends StoreFacts {
  /** Each scope's facts by id, in store order. */
  private readonly scopes = new Map<string, Map<string, Kept>>();
  private readonly marks = new MemoryLearnMarks();
  /** The facts with a source in each session: what an erasure or a delete of messages reads, not every fact. */
  private readonly bySession = new FactsBySession<Kept>();
  private seq = 0;

  constructor(
    private readonly host: MemoryFactsHost,
    limits?: QueryLimits,
  ) {
    super(limits);
    this.vectors = new MemoryFactVectors(this.scopes);
  }

  protected assertOpen(): void {
    this.host.assertOpen();
  }

  protected async readOwned(owner: string, sessionIds: readonly string[]): Promise<Set<string>> {
    const owned = this.host.ownedIds(owner);
    return new Set(sessionIds.filter((id) => owned.has(id)));
  }

  protected async writeFacts(
    scope: ScopeKey,
    facts: readonly FactDraft[],
    now: number,
    paths: readonly string[],
  ): Promise<Fact[]> {
    const held = this.scopes.get(scope.key);
    for (const draft of facts) {
      if (held?.has(draft.id))
        throw new SessionError("CONFLICT", `Fact "${draft.id}" already exists in this scope`);
    }
    const state = { status: "current" as const, supersededBy: null, createdAt: now };
    const current = facts.map((draft) => ({ ...draft, ...state }));
    return this.keep(scope, current, paths).map(copy);
  }

  protected async readFact(scope: ScopeKey, id: string): Promise<Fact | null> {
    const kept = this.scopes.get(scope.key)?.get(id);
    return kept ? copy(kept.fact) : null;
  }

  protected async writeStatus(
    scope: ScopeKey,
    id: string,
    status: "superseded" | "invalidated",
    by: string | null,
  ): Promise<boolean> {
    const kept = this.scopes.get(scope.key)?.get(id);
    if (kept?.fact.status !== "current") return false;
    kept.fact.status = status;
    kept.fact.supersededBy = by;
    return true;
  }

  protected async writeDelete(scope: ScopeKey, id: string): Promise<boolean> {
    const kept = this.scopes.get(scope.key)?.get(id);
    return kept !== undefined && this.drop([kept]) > 0;
  }

  protected async readPage(
    scope: ScopeKey,
    filter: FactFilter,
    before: number | null,
    limit: number,
  ): Promise<SeqFact[]> {
    const sources = filter.sourcesIn && new Set(filter.sourcesIn);
    const rows = [...(this.scopes.get(scope.key)?.values() ?? [])];
    const page: SeqFact[] = [];
    for (let i = rows.length - 1; i >= 0 && page.length < limit; i--) {
      const kept = rows[i]!;
      if (before !== null && kept.seq >= before) continue;
      if (passes(kept, filter, sources)) page.push({ seq: kept.seq, fact: copy(kept.fact) });
    }
    return page;
  }

  // Every fact of the scope is read (they are in memory already): no cap.
  protected async readCandidates(
    scope: ScopeKey,
    terms: QueryTerm[],
    _cap: number,
    filter: FactFilter,
  ): Promise<EntryCandidates | undefined> {
    // Newest first, as the SQL reads.
    return candidatesOf([...(this.scopes.get(scope.key)?.values() ?? [])].reverse(), terms, filter);
  }

  protected async readSeqs(scope: ScopeKey, seqs: readonly number[]): Promise<Map<number, Fact>> {
    const wanted = new Set(seqs);
    const found = new Map<number, Fact>();
    for (const kept of this.scopes.get(scope.key)?.values() ?? []) {
      if (wanted.has(kept.seq)) found.set(kept.seq, copy(kept.fact));
    }
    return found;
  }

  protected async readUnlearned(
    sessionId: string,
    after: number,
    limit: number,
  ): Promise<LearnableMessage[]> {
    const rows = [...(this.host.sessionData(sessionId, false)?.rows.values() ?? [])];
    return rows
      .filter((row) => row.seq > after)
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit)
      .map((row) => ({
        seq: row.seq,
        id: row.id,
        role: row.role,
        text: row.text,
        createdAt: Date.parse(row.createdAt),
      }));
  }

  protected async readAny(): Promise<boolean> {
    for (const facts of this.scopes.values()) if (facts.size > 0) return true;
    return false;
  }

  protected async readMark(sessionId: string): Promise<LearnMark | null> {
    return this.marks.read(sessionId);
  }

  protected async writeClaim(
    sessionId: string,
    holder: string,
    now: number,
    until: number,
  ): Promise<LearnMark | null> {
    return this.marks.claim(sessionId, holder, now, until);
  }

  protected async writeAdvance(
    sessionId: string,
    holder: string,
    through: number,
    failures: number,
  ): Promise<boolean> {
    return this.marks.advance(sessionId, holder, through, failures);
  }

  protected async writeRelease(sessionId: string, holder: string): Promise<void> {
    this.marks.release(sessionId, holder);
  }

  protected async readAll(after: ExportMark | null, limit: number): Promise<(SeqFact & { scope: string })[]> {
    // By scope key, then store order, as the SQL stores read it (their scope index).
    const keys = [...this.scopes.keys()].filter((key) => after === null || key >= after.scope).sort();
    const found: (SeqFact & { scope: string })[] = [];
    for (const scope of keys) {
      for (const kept of this.scopes.get(scope)!.values()) {
        if (found.length === limit) return found;
        if (after !== null && scope === after.scope && kept.seq <= after.seq) continue;
        found.push({ scope, seq: kept.seq, fact: copy(kept.fact) });
      }
    }
    return found;
  }

  protected async readStored(sessionId: string, messageIds: readonly string[]): Promise<Set<string>> {
    return this.stored(sessionId, messageIds);
  }

  private stored(sessionId: string, messageIds: readonly string[]): Set<string> {
    const rows = this.host.sessionData(sessionId, false)?.rows;
    return new Set(messageIds.filter((id) => rows?.has(id)));
  }

  protected async writeImported(
    scope: ScopeKey,
    facts: readonly ImportedFact[],
    paths: readonly string[],
  ): Promise<number> {
    const held = this.scopes.get(scope.key);
    const fresh = facts.flatMap((fact, i) => (held?.has(fact.id) ? [] : [i]));
    const at = fresh.map((i) => paths[i] ?? "");
    return this.keep(
      scope,
      fresh.map((i) => facts[i]!),
      at,
    ).length;
  }

  // Every write of facts: their sources checked against the stored messages, then each kept, in one synchronous
  // step (no other write comes between: a delete of a source message later finds the fact). The facts kept.
  private keep(
    scope: ScopeKey,
    facts: readonly (FactDraft &
      Pick<Fact, "status" | "supersededBy" | "createdAt"> & { scope?: ScopeKey })[],
    paths: readonly string[],
  ): Fact[] {
    const held = new Map<string, Set<string>>();
    for (const [sessionId, ids] of sourcesBySession(facts)) held.set(sessionId, this.stored(sessionId, ids));
    assertSourcesHeld(facts, held, paths);
    if (facts.length === 0) return [];
    const into = this.scopes.get(scope.key) ?? new Map<string, Kept>();
    this.scopes.set(scope.key, into);
    return facts.map(({ scope: _, ...draft }) => {
      const { owner, sessionId } = scope;
      const fact: Fact = { ...draft, sources: draft.sources.map((s) => ({ ...s })), owner, sessionId };
      const kept: Kept = { seq: ++this.seq, key: scope.key, fact };
      into.set(draft.id, kept);
      this.bySession.link(kept);
      return fact;
    });
  }

  /**
   * @internal an erasure of `sessionId`: drops every fact with a source in it, whatever its scope, and its learn
   * mark; a fact one of them had superseded is current again (the later word is gone). How many facts were stored.
   */
  forgetSession(sessionId: string): number {
    this.marks.forget(sessionId);
    return this.drop(this.bySession.of(sessionId));
  }

  /**
   * @internal a delete of the session's messages `messageIds` (null: all of them, a clear): a fact whose every source
   * is among them goes (and a fact it had superseded is current again, as in an erasure); the others lose those
   * sources. How many facts went.
   */
  forgetMessages(sessionId: string, messageIds: ReadonlySet<string> | null): number {
    const deleted = (s: { sessionId: string; messageId: string }) =>
      s.sessionId === sessionId && (messageIds === null || messageIds.has(s.messageId));
    const gone: Kept[] = [];
    for (const kept of this.bySession.of(sessionId)) {
      const { fact } = kept;
      if (!fact.sources.some(deleted)) continue;
      const left = fact.sources.filter((s) => !deleted(s));
      if (left.length === 0) gone.push(kept);
      else {
        fact.sources = left;
        if (!left.some((s) => s.sessionId === sessionId)) this.bySession.unlink(sessionId, kept);
      }
    }
    return this.drop(gone);
  }

  // Drops facts (from their scopes and the source index); what they had superseded is re-linked or current again.
  private drop(gone: readonly Kept[]): number {
    const removed: Kept[] = [];
    for (const kept of gone) {
      if (!this.scopes.get(kept.key)?.delete(kept.fact.id)) continue;
      for (const source of kept.fact.sources) this.bySession.unlink(source.sessionId, kept);
      removed.push(kept);
    }
    const successors = successorsOf(removed.map(({ key, fact }) => ({ scope: key, ...fact })));
    const byScope = new Map<string, Map<string, string | null>>();
    removed.forEach((kept, i) => {
      const next = byScope.get(kept.key) ?? new Map<string, string | null>();
      next.set(kept.fact.id, successors[i] ?? null);
      byScope.set(kept.key, next);
    });
    for (const [key, next] of byScope) {
      const facts = this.scopes.get(key)!;
      restore(facts, next);
      if (facts.size === 0) this.scopes.delete(key);
    }
    return removed.length;
  }

  /** Every stored fact (a test's or an export's view). */
  count(): number {
    let n = 0;
    for (const facts of this.scopes.values()) n += facts.size;
    return n;
  }
}
