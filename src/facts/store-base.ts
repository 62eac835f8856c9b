/**
 * The base of this package's fact stores: every argument checked, a fact's sources kept to its scope, and search
 * ranked here (the library's query language and the search blocks' ranking), so a backend supplies only reads and
 * writes of rows (its `read*` and `write*` primitives), as the context stores do (context/store-base.ts). The learner's
 * marks are the base's own base (learn-marks-base.ts).
 */
import type { EntryCandidates } from "../context/store-base.js";
import type { Fact, FactHit, FactPage, FactQuery, FactScope, FactStore, NewFact } from "../contract/facts.js";
import { SessionError } from "../errors.js";
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import { perTermCap, rankCandidates, recallTerms, weighMatches } from "../search/rank.js";
import type {
  FactVectorCounts,
  FactVectorRows,
  FactVectorWrite,
  UnembeddedFact,
} from "../search/vectors/fact-vectors.js";
import {
  type ExportMark,
  exportCursor,
  type ImportedFact,
  parseExportCursor,
  parseImportedFacts,
} from "../store/fact-import.js";
import { sourceSessions } from "../store/fact-sources.js";
import {
  type FactDraft,
  type FactFilter,
  parseCursor,
  parseFactId,
  parseFactQuery,
  parseNewFacts,
  parseScope,
  type ScopeKey,
  withoutOwnSession,
} from "../store/facts.js";
import { SEARCH_CANDIDATES } from "../store/limits.js";
import { assertInScope, importFacts } from "./import.js";
import { StoreLearnMarks } from "./learn-marks-base.js";

/** A stored fact with its place in the store's order (a page's cursor, a search's candidate key). */
export interface SeqFact {
  seq: number;
  fact: Fact;
}

/** The base of the fact stores (see the module comment). */
export abstract class StoreFacts extends StoreLearnMarks implements FactStore {
  constructor(private readonly limits: QueryLimits = DEFAULT_QUERY_LIMITS) {
    super();
  }

  /** Which of `sessionIds` are registered to `owner`. */
  protected abstract readOwned(owner: string, sessionIds: readonly string[]): Promise<Set<string>>;
  /**
   * Refuses (`DECRYPT_FAILED`) a write of the scope's facts that this store cannot seal: an encrypted owner's whose
   * key it lacks or has wrong. A store with nothing at rest lets every write pass.
   */
  protected async assertWritable(_scope: ScopeKey): Promise<void> {}
  /**
   * Stores checked facts in one transaction, all or none: `CONFLICT` for an id taken in the scope, `INVALID_ARGUMENT`
   * for a source not stored, read in that transaction (fact `i` named `paths[i]`: store/fact-sources.ts).
   */
  protected abstract writeFacts(
    scope: ScopeKey,
    facts: readonly FactDraft[],
    now: number,
    paths: readonly string[],
  ): Promise<Fact[]>;
  /** Fact `id` of the scope, or null. */
  protected abstract readFact(scope: ScopeKey, id: string): Promise<Fact | null>;
  /** Sets a current fact's status (and what superseded it); false when it is not current. */
  protected abstract writeStatus(
    scope: ScopeKey,
    id: string,
    status: "superseded" | "invalidated",
    by: string | null,
  ): Promise<boolean>;
  /** Removes fact `id` of the scope with all that hangs on it (see FactStore.delete); false when there is none. */
  protected abstract writeDelete(scope: ScopeKey, id: string): Promise<boolean>;
  /** At most `limit` facts of the scope passing `filter`, before `before` in store order (null: from the newest). */
  protected abstract readPage(
    scope: ScopeKey,
    filter: FactFilter,
    before: number | null,
    limit: number,
  ): Promise<SeqFact[]>;
  /** Per term, the scope's newest facts passing `filter` that match it (at most `cap`), their lengths, the count. */
  protected abstract readCandidates(
    scope: ScopeKey,
    terms: QueryTerm[],
    cap: number,
    filter: FactFilter,
  ): Promise<EntryCandidates | undefined>;
  /** The facts of these seqs in the scope (one deleted meanwhile is left out). */
  protected abstract readSeqs(scope: ScopeKey, seqs: readonly number[]): Promise<Map<number, Fact>>;
  /**
   * At most `limit` facts of the store after `after` (null: from the first), whatever their status, by scope key and
   * then store order (each engine's primary or scope index, so a page is one range read).
   */
  protected abstract readAll(
    after: ExportMark | null,
    limit: number,
  ): Promise<(SeqFact & { scope: string })[]>;
  /** Which of `messageIds` the session holds. */
  protected abstract readStored(sessionId: string, messageIds: readonly string[]): Promise<Set<string>>;
  /** Stores imported facts whose ids the scope lacks, in one transaction, checked as by writeFacts; how many. */
  protected abstract writeImported(
    scope: ScopeKey,
    facts: readonly ImportedFact[],
    paths: readonly string[],
  ): Promise<number>;

  async add(scope: FactScope, facts: readonly NewFact[]): Promise<Fact[]> {
    const key = parseScope(scope);
    const drafts = parseNewFacts(facts);
    this.assertOpen();
    if (drafts.length === 0) return [];
    const paths = drafts.map((_, i) => `facts.${i}`);
    await assertInScope((o, ids) => this.readOwned(o, ids), key, drafts, paths);
    await this.assertWritable(key);
    const added = await this.writeFacts(key, drafts, Date.now(), paths);
    this.written++;
    await this.onStored?.(sourceSessions(drafts));
    return added;
  }

  async get(scope: FactScope, id: string): Promise<Fact | null> {
    const key = parseScope(scope);
    const factId = parseFactId(id);
    this.assertOpen();
    return this.readFact(key, factId);
  }

  async supersede(scope: FactScope, id: string, by: string): Promise<boolean> {
    const key = parseScope(scope);
    const factId = parseFactId(id);
    const byId = parseFactId(by, "by");
    if (factId === byId) {
      throw new SessionError("INVALID_ARGUMENT", "A fact cannot supersede itself", {
        issues: [{ path: "by", rule: "conflict" }],
      });
    }
    this.assertOpen();
    if ((await this.readFact(key, byId)) === null) {
      throw new SessionError("NOT_FOUND", `Fact "${byId}" not found in this scope`);
    }
    return this.writeStatus(key, factId, "superseded", byId);
  }

  async invalidate(scope: FactScope, id: string): Promise<boolean> {
    const key = parseScope(scope);
    const factId = parseFactId(id);
    this.assertOpen();
    return this.writeStatus(key, factId, "invalidated", null);
  }

  // No key is needed: a delete reads no text and writes none, so an owner whose key is lost can still remove facts.
  async delete(scope: FactScope, id: string): Promise<boolean> {
    const key = parseScope(scope);
    const factId = parseFactId(id);
    this.assertOpen();
    return this.writeDelete(key, factId);
  }

  async list(scope: FactScope, query?: FactQuery & { cursor?: string | null }): Promise<FactPage> {
    const key = parseScope(scope);
    const filter = parseFactQuery(query);
    const before = parseCursor(query?.cursor);
    this.assertOpen();
    if (filter.limit === 0 || filter.status.length === 0 || filter.sourcesIn?.length === 0) {
      return { facts: [], next: null };
    }
    // One more than the page tells whether there is a next page without a count.
    const rows = await this.readPage(key, filter, before, filter.limit + 1);
    const page = rows.slice(0, filter.limit);
    const last = page[page.length - 1];
    return {
      facts: page.map((row) => row.fact),
      next: rows.length > filter.limit && last ? String(last.seq) : null,
    };
  }

  async search(scope: FactScope, query: string, options?: FactQuery): Promise<FactHit[]> {
    return this.searchWithin(scope, query, options);
  }

  /**
   * @internal search() as recall takes it (search/facts.ts relevantFacts): only the facts matching at least the
   * best one's count of the query's terms less `slack`, ranks renumbered; the rows of the others are never read.
   */
  searchRelevant(scope: FactScope, query: string, options: FactQuery, slack: number): Promise<FactHit[]> {
    return this.searchWithin(scope, query, options, slack);
  }

  private async searchWithin(
    scope: FactScope,
    query: string,
    options: FactQuery | undefined,
    slack?: number,
  ): Promise<FactHit[]> {
    const key = parseScope(scope);
    const filter = parseFactQuery(options);
    // Parsed (and so bounded) first: a query over the limits is refused even with limit 0.
    const terms = typeof query === "string" ? recallTerms(query, this.limits) : [];
    if (terms.length === 0 || filter.limit === 0 || filter.status.length === 0) return [];
    if (filter.sourcesIn?.length === 0) return [];
    this.assertOpen();
    const read = withoutOwnSession(key, filter);
    const found = await this.readCandidates(key, terms, perTermCap(terms.length, SEARCH_CANDIDATES), read);
    if (!found) return [];
    const { matches, lengths, documents } = found;
    // Facts are no conversation: no neighbours, as search-block entries (rank.ts rankEntries), with their scores.
    const ranked = rankCandidates(
      weighMatches(matches, (seq) => lengths.get(seq), documents),
      () => null,
      {
        top: filter.limit,
      },
    );
    const best = ranked.reduce((most, r) => Math.max(most, r.matched), 0);
    const kept = slack === undefined ? ranked : ranked.filter((r) => r.matched >= best - slack);
    const facts = await this.readSeqs(
      key,
      kept.map((r) => r.seq),
    );
    const hits: FactHit[] = [];
    for (const { seq, score, matched } of kept) {
      const fact = facts.get(seq);
      if (fact) hits.push({ fact, score, rank: hits.length + 1, matched });
    }
    return hits;
  }

  /**
   * @internal the scope's facts nearest to the unit vector `query` (a search's, embedded by the vector channel), best
   * first, filtered as {@link search} filters; each hit's score is its cosine similarity. [] on a store that keeps no
   * fact vectors.
   */
  async nearby(scope: FactScope, query: Float32Array, options?: FactQuery): Promise<FactHit[]> {
    const key = parseScope(scope);
    const filter = parseFactQuery(options);
    if (filter.limit === 0 || filter.status.length === 0 || filter.sourcesIn?.length === 0) return [];
    this.assertOpen();
    const near =
      (await this.vectors?.nearest(key.key, query, withoutOwnSession(key, filter), filter.limit)) ?? [];
    if (near.length === 0) return [];
    const facts = await this.readSeqs(
      key,
      near.map((n) => n.seq),
    );
    const hits: FactHit[] = [];
    for (const { seq, score } of near) {
      const fact = facts.get(seq);
      if (fact) hits.push({ fact, score, rank: hits.length + 1 });
    }
    return hits;
  }

  /**
   * The store's facts' vectors (set by a backend that keeps them): nearby() reads the scope's facts nearest to its
   * query, of the newest FACT_VECTOR_SCAN; none: the methods below answer nothing.
   */
  protected vectors: FactVectorRows | undefined;

  /** @internal facts without a vector yet (the vector channel's work); none on a store that keeps no fact vectors. */
  async unembedded(after: number, limit: number): Promise<UnembeddedFact[]> {
    return (await this.vectors?.unembedded(after, limit)) ?? [];
  }

  /** @internal stores facts' vectors (see {@link unembedded}). */
  async writeVectors(rows: readonly FactVectorWrite[]): Promise<void> {
    await this.vectors?.write(rows);
  }

  /** @internal the facts whose text the embedder refused are to embed again (`backfill({ retryFailed })`). */
  async retryRefused(): Promise<void> {
    await this.vectors?.retry();
  }

  /** @internal forgets every fact vector (the vector channel's reset). */
  async forgetVectors(): Promise<void> {
    await this.vectors?.forget();
  }

  /** @internal how the facts stand in the vector channel (its status()). */
  async vectorCounts(): Promise<FactVectorCounts> {
    return (await this.vectors?.counts()) ?? { embedded: 0, pending: 0, failed: 0 };
  }

  /**
   * @internal awaited after facts were stored (add, import), with their sources' sessions: the vector worker embeds
   * them, a change log tells other processes.
   */
  onStored: ((sessions: readonly string[]) => void | Promise<void>) | undefined;

  /** @internal how many writes stored facts through this object (add, import): a search's "no facts" is redone after one. */
  written = 0;

  async exportPage(query?: { cursor?: string | null; limit?: number }): Promise<FactPage> {
    const { limit } = parseFactQuery(query?.limit === undefined ? {} : { limit: query.limit });
    const after = parseExportCursor(query?.cursor);
    this.assertOpen();
    if (limit === 0) return { facts: [], next: null };
    const rows = await this.readAll(after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      facts: page.map((row) => row.fact),
      next: rows.length > limit && last ? exportCursor(last) : null,
    };
  }

  async importFacts(facts: readonly Fact[]): Promise<{ inserted: number; skipped: number }> {
    const checked = parseImportedFacts(facts);
    this.assertOpen();
    if (checked.length === 0) return { inserted: 0, skipped: 0 };
    const imported = await importFacts(
      {
        readOwned: (owner, ids) => this.readOwned(owner, ids),
        assertWritable: (scope) => this.assertWritable(scope),
        readStored: (sessionId, ids) => this.readStored(sessionId, ids),
        writeImported: (scope, list, paths) => this.writeImported(scope, list, paths),
      },
      checked,
    );
    if (imported.inserted > 0) {
      this.written++;
      await this.onStored?.(sourceSessions(checked));
    }
    return imported;
  }
}
