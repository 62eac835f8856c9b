/**
 * The fact store of both SQL engines: the base's primitives as the programs of sql/facts/steps.ts and
 * fact-reads.ts, run by an engine, which keeps to itself what differs (search candidates, reading a session's
 * messages, the keys). A scope whose owner has a key is sealed (store/fact-sealing.ts): its writes are sealed under
 * the key, its reads opened with it, its searches hash their terms into the owner's blind tokens; a store without
 * the key (no keyring, a keyring without it, a wrong one) refuses every write and read of the scope with
 * `DECRYPT_FAILED` before any statement of facts runs.
 */
import type { EntryCandidates } from "../context/store-base.js";
import type { Fact, FactStatus, LearnableMessage, LearnMark } from "../contract/facts.js";
import { blindTokensOf } from "../search/blind-tokens.js";
import type { QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import type { FactVectorRows } from "../search/vectors/fact-vectors.js";
import type { FactEngine } from "../sql/facts/engine.js";
import { readAll, readFact, readPage, readSeqs, type StoredFact } from "../sql/facts/reads.js";
import {
  addFacts,
  deleteFact,
  type FactStatements,
  importFacts,
  markOf,
  one,
  setStatus,
} from "../sql/facts/steps.js";
import type { ContentKeys } from "../store/crypto/content-keys.js";
import { retryGuarded } from "../store/crypto/write-guard.js";
import type { ExportMark, ImportedFact } from "../store/fact-import.js";
import { openFact } from "../store/fact-sealing.js";
import { type FactDraft, type FactFilter, type ScopeKey, scopeOfKey } from "../store/facts.js";
import { type SeqFact, StoreFacts } from "./store-base.js";

/** The facts of an SQL store (see the module comment). */
export class SqlFacts extends StoreFacts {
  private readonly s: FactStatements;

  /** `vectors`: the engine's fact vectors (sql/facts/sqlite-vectors.ts, postgres-vectors.ts). */
  constructor(
    private readonly engine: FactEngine,
    limits?: QueryLimits,
    vectors?: FactVectorRows,
  ) {
    super(limits);
    this.s = engine.statements;
    this.vectors = vectors;
  }

  protected assertOpen(): void {
    this.engine.assertOpen();
  }

  protected async readOwned(owner: string, sessionIds: readonly string[]): Promise<Set<string>> {
    const rows = await this.engine.run(() => one(this.s.owned(owner, sessionIds)), false);
    return new Set(rows.map((r) => String(r.id)));
  }

  // The scope's owner: the one it names, or its session's (null: none, or a session not registered).
  private ownerOf(scope: ScopeKey): Promise<string | null> {
    const { owner, sessionId } = scope;
    if (owner !== null) return Promise.resolve(owner);
    return this.engine.withKeys((k) => k.ownerOf(sessionId as string));
  }

  // The key the scope's facts are sealed under (null: in clear); `DECRYPT_FAILED` for an owner with encrypted
  // content whose key the keyring lacks or has wrong (a first write under an owner's key records it, as a message's).
  private async sealKey(scope: ScopeKey): Promise<Uint8Array | null> {
    const owner = await this.ownerOf(scope);
    if (owner === null) return null;
    return this.engine.withKeys((k) => k.ownerKey(owner, true, whereOf(scope)));
  }

  // A read's look at the scope: its owner and the keys its terms are hashed under (none: in clear), refused as a
  // write is where the key is missing or wrong, even where the scope holds no fact.
  private async readKeys(scope: ScopeKey): Promise<{ owner: string | null; search: Uint8Array[] }> {
    const owner = await this.ownerOf(scope);
    if (owner === null) return { owner, search: [] };
    return { owner, search: await this.engine.withKeys((k) => k.ownerSearchKeys(owner, whereOf(scope))) };
  }

  // The stored facts of one scope with their sealed text opened (with the owner's key its content names).
  private async opened(scope: string, owner: string | null, list: StoredFact[]): Promise<StoredFact[]> {
    if (!list.some((s) => s.sealed)) return list;
    return this.engine.withKeys((k) => list.map((stored) => openStored(k, owner, scope, stored)));
  }

  protected override async assertWritable(scope: ScopeKey): Promise<void> {
    await this.sealKey(scope);
  }

  // The key is looked up inside the write's transaction and the inserts carry its guard (crypto/write-guard.ts):
  // another process recording the owner's first key meanwhile refuses them, and the write is looked up again.
  protected async writeFacts(
    scope: ScopeKey,
    facts: readonly FactDraft[],
    now: number,
    paths: readonly string[],
  ): Promise<Fact[]> {
    const where = whereOf(scope);
    return retryGuarded((fresh) =>
      this.engine.run(() => addFacts(this.s, scope, facts, now, where, fresh, paths), true),
    );
  }

  protected async readFact(scope: ScopeKey, id: string): Promise<Fact | null> {
    const { owner } = await this.readKeys(scope);
    const found = await this.engine.run(() => readFact(this.s, scope.key, id), false);
    return found ? ((await this.opened(scope.key, owner, [found]))[0]?.fact ?? null) : null;
  }

  protected async writeStatus(
    scope: ScopeKey,
    id: string,
    status: FactStatus,
    by: string | null,
  ): Promise<boolean> {
    await this.readKeys(scope);
    return this.engine.run(() => setStatus(this.s, scope.key, id, status, by), false);
  }

  protected async writeDelete(scope: ScopeKey, id: string): Promise<boolean> {
    return this.engine.run(() => deleteFact(this.s, scope.key, id), true);
  }

  protected async readPage(
    scope: ScopeKey,
    filter: FactFilter,
    before: number | null,
    limit: number,
  ): Promise<SeqFact[]> {
    const { owner } = await this.readKeys(scope);
    const rows = await this.engine.run(() => readPage(this.s, scope.key, filter, before, limit), false);
    return this.opened(scope.key, owner, rows);
  }

  protected async readCandidates(
    scope: ScopeKey,
    terms: QueryTerm[],
    cap: number,
    filter: FactFilter,
  ): Promise<EntryCandidates | undefined> {
    const { search } = await this.readKeys(scope);
    return this.engine.candidates(scope.key, terms, cap, filter, search.map(blindTokensOf));
  }

  protected async readSeqs(scope: ScopeKey, seqs: readonly number[]): Promise<Map<number, Fact>> {
    const rows = this.engine.readSeqs
      ? await this.engine.readSeqs(scope.key, seqs)
      : await this.engine.run(() => readSeqs(this.s, scope.key, seqs), false);
    const owner = rows.some((r) => r.sealed) ? await this.ownerOf(scope) : null;
    return new Map((await this.opened(scope.key, owner, rows)).map((r) => [r.seq, r.fact]));
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

  protected async readAll(after: ExportMark | null, limit: number): Promise<(SeqFact & { scope: string })[]> {
    const rows = await this.engine.run(() => readAll(this.s, after, limit), false);
    // Each scope with a sealed fact is looked at once, as its own read would (a store without its key refuses).
    const owners = new Map<string, string | null>();
    for (const row of rows) {
      if (row.sealed && !owners.has(row.scope)) {
        owners.set(row.scope, (await this.readKeys(scopeKeyOf(row.scope))).owner);
      }
    }
    if (owners.size === 0) return rows;
    return this.engine.withKeys((k) =>
      rows.map((row) => ({
        ...openStored(k, owners.get(row.scope) ?? null, row.scope, row),
        scope: row.scope,
      })),
    );
  }

  protected async readStored(sessionId: string, messageIds: readonly string[]): Promise<Set<string>> {
    const rows = await this.engine.run(() => one(this.s.stored(sessionId, messageIds)), false);
    return new Set(rows.map((r) => String(r.id)));
  }

  protected async writeImported(
    scope: ScopeKey,
    facts: readonly ImportedFact[],
    paths: readonly string[],
  ): Promise<number> {
    const where = whereOf(scope);
    return retryGuarded((fresh) =>
      this.engine.run(() => importFacts(this.s, scope, facts, where, fresh, paths), true),
    );
  }
}

// What a refusal names: the scope's facts.
function whereOf(scope: ScopeKey): string {
  return scope.owner !== null ? `facts of owner "${scope.owner}"` : `facts of session "${scope.sessionId}"`;
}

function scopeKeyOf(key: string): ScopeKey {
  return { ...scopeOfKey(key), key };
}

// A stored fact as read: its text and subject opened when sealed.
function openStored(keys: ContentKeys, owner: string | null, scope: string, stored: StoredFact): StoredFact {
  if (!stored.sealed) return stored;
  const words = openFact(keys, owner, scope, stored.fact.id, stored.fact.text);
  return { ...stored, fact: { ...stored.fact, ...words }, sealed: false };
}
