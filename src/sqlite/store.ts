import { SessionError } from "../errors.js";
import { canBeStored } from "../message.js";
import { type QueryLimits, queryLimits } from "../search/limits.js";
import { parseQuery, toFts5 } from "../search/query.js";
import type { AdoptionReport, AdoptOptions } from "../store/adopt.js";
import { logSettings } from "../store/change-rows.js";
import { ChangeFeed, type ChangeListener, type SubscribeOptions, type Unsubscribe } from "../store/feed.js";
import { SEARCH_CANDIDATES, searchBranch, searchLimit } from "../store/limits.js";
import { observeRegistry, observeTransfer, publishStepWrites } from "../store/observe.js";
import type { StepWrite } from "../store/step.js";
import type {
  AttachmentCapableStore,
  ContextCapableStore,
  RegistryCapableStore,
  StoreSearchOptions,
  TransferCapableStore,
} from "../store/types.js";
import { type WritePolicy, writePolicy } from "../store/write-policy.js";
import type { SearchResult } from "../types.js";
import { adoptOnOpen, adoptReference } from "./adopt.js";
import { ensureHead } from "./append.js";
import { SqliteAttachments } from "./attachments.js";
import { SqliteChangeLog } from "./change-log.js";
import { closableDriver } from "./closable.js";
import { SqliteBlockStore, SqliteEntryStore } from "./context-store.js";
import type { SqlDriver } from "./driver.js";
import { FamilyExpander } from "./fts-families.js";
import { IdleWork } from "./idle-work.js";
import { migrate } from "./migrations.js";
import { openSqlite, type SqliteOptions, type SqliteSource } from "./open.js";
import { SqliteSessionRegistry } from "./registry.js";
import { DEFAULT_POLL_MS, SqliteRemoteWatch } from "./remote-watch.js";
import { readHits } from "./search-hits.js";
import { flushSearchIndex, indexPendingIfWritable, matchPending } from "./search-index.js";
import { SqliteSessionProvider } from "./session-provider.js";
import { writeSqliteStep } from "./step.js";
import { SqliteTransfer } from "./transfer.js";

// bm25 over the newest SEARCH_CANDIDATES matches only; the sid column (the session token) weighs nothing.
const RANKED_SQL = `SELECT seq FROM (
    SELECT rowid AS seq, bm25(agent_messages_fts, 1.0, 0.0) AS score FROM agent_messages_fts
    WHERE agent_messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?
  ) ORDER BY score, seq DESC`;

// The same candidates of one session, filtered by a primary-key lookup per match instead of the session token.
const RANKED_IN_SESSION_SQL = `SELECT seq FROM (
    SELECT agent_messages_fts.rowid AS seq, bm25(agent_messages_fts, 1.0, 0.0) AS score FROM agent_messages_fts
    JOIN agent_messages m ON m.seq = agent_messages_fts.rowid
    WHERE agent_messages_fts MATCH ? AND m.session_num = ? ORDER BY agent_messages_fts.rowid DESC LIMIT ?
  ) ORDER BY score, seq DESC`;

/** What a search needs to know first: the store's size (highest seq), the index watermark, the session's scope. */
interface SearchState {
  total: number;
  indexed: number | null;
  scope: { num: number; filter: "none" | "lookup" | "token" } | undefined;
}

/** Sessions in one SQLite database: a file path, `:memory:`, a database handle or a `sql`-tag object. */
export class SqliteStore
  implements AttachmentCapableStore, ContextCapableStore, RegistryCapableStore, TransferCapableStore
{
  readonly backend = "sqlite";
  /** @internal the connection every provider of this store shares. */
  readonly driver: SqlDriver;
  /** Context blocks and cached prompts. */
  readonly blocks: SqliteBlockStore;
  /** Searchable entries of search blocks. */
  readonly entries: SqliteEntryStore;
  /** Named sessions for SessionManager (added with the manager). */
  readonly registry: SqliteSessionRegistry;
  /** Offloaded media payloads, each stored once. */
  readonly attachments: SqliteAttachments;
  /** Lossless export and import of whole sessions (the CLI's `export` / `import`). */
  readonly transfer: SqliteTransfer;
  /** @internal what every write through this store enforces (reserved metadata keys, size cap). */
  readonly policy: WritePolicy;
  /**
   * What opening this store adopted from the reference's tables (`assistant_messages`, …) found in the same
   * database, or null when there was nothing to adopt (or it was adopted before: it runs once, recorded).
   */
  readonly adopted: AdoptionReport | null;
  private readonly families: FamilyExpander;
  private readonly queryLimits: QueryLimits;
  private closed = false;
  private readonly refuseStatements: () => void;
  private readonly idle: IdleWork;
  /** @internal the change log shared with other processes, when opened with `changeLog`. */
  readonly changeLog: SqliteChangeLog | undefined;
  /** @internal the change feed every provider of this store publishes to. */
  readonly feed: ChangeFeed;

  constructor(source: SqliteSource, options: SqliteOptions = {}) {
    this.policy = writePolicy(options);
    this.queryLimits = queryLimits(options.queryLimits);
    const raw = openSqlite(source, options);
    try {
      migrate(raw);
      this.adopted = adoptOnOpen(raw);
    } catch (error) {
      raw.close();
      throw error;
    }
    const guarded = closableDriver(raw, "SqliteStore");
    // Idle work runs its own transactions on the inner driver, so they do not schedule it again.
    const idle = new IdleWork(guarded.driver);
    this.driver = {
      ...guarded.driver,
      transaction: (fn) => {
        const result = guarded.driver.transaction(fn);
        idle.noteWrite();
        return result;
      },
    };
    this.idle = idle;
    this.refuseStatements = guarded.close;
    this.blocks = new SqliteBlockStore(this.driver);
    this.entries = new SqliteEntryStore(this.driver, this.queryLimits);
    this.registry = new SqliteSessionRegistry(this.driver);
    this.attachments = new SqliteAttachments(() => this.driver);
    this.transfer = new SqliteTransfer(this.driver);
    this.families = new FamilyExpander(this.driver, "agent_messages_fts");
    const log = logSettings(options.changeLog);
    this.changeLog = log
      ? new SqliteChangeLog(this.driver, log, (sessionId, id) => this.session(sessionId).getMessage(id))
      : undefined;
    const watch = new SqliteRemoteWatch(this.driver, this.changeLog, log?.pollMs ?? DEFAULT_POLL_MS);
    this.feed = new ChangeFeed(
      () => this.changeLog,
      () => watch,
    );
    observeRegistry(this.registry, this.feed);
    observeTransfer(this.transfer, this.feed);
  }

  /**
   * Calls `listener` after every write to any session of this store, in commit order; with `changeLog`, also
   * after other processes' writes (polled) and from a cursor (see docs/FEED.md).
   */
  subscribe(listener: ChangeListener, options?: SubscribeOptions): Unsubscribe {
    if (this.closed) throw new SessionError("CLOSED", "This SqliteStore was closed");
    return this.feed.subscribe(listener, options);
  }

  /**
   * Adopts the reference's tables again (idempotent: rows already adopted are skipped and verified), e.g. after
   * the reference wrote more, and optionally drops them once everything is verified; null when there are none.
   */
  async adoptReference(options: AdoptOptions = {}): Promise<AdoptionReport | null> {
    return adoptReference(this.driver, options);
  }

  /** The storage contract for one session (`""` = the default unnamed session). */
  session(sessionId: string): SqliteSessionProvider {
    return new SqliteSessionProvider(this, sessionId);
  }

  /** @internal the numeric key of a session, optionally creating its head row. */
  sessionNum(sessionId: string, create: boolean): number | undefined {
    if (create) return ensureHead(this.driver, sessionId).num;
    // A session id no head can have is not looked up (better-sqlite3 would match its U+FFFD form).
    if (!canBeStored(sessionId)) return undefined;
    return this.driver.get<{ num: number }>("SELECT num FROM agent_session_heads WHERE session_id = ?", [
      sessionId,
    ])?.num;
  }

  /**
   * Full-text search. Relevance (bm25) is ranked among the newest matches only (see SEARCH_CANDIDATES), so a
   * common word costs the same in a store of a million messages as in a small one; a session filter goes into
   * the FTS query itself as a token rather than a join.
   */
  async searchMessages(query: string, options: StoreSearchOptions = {}): Promise<SearchResult[]> {
    const limit = searchLimit(options.limit);
    const branch = searchBranch(options.branch);
    if (typeof query !== "string" || limit === 0) return [];
    const terms = parseQuery(query, this.queryLimits);
    if (terms.length === 0) return [];
    // Every stored message is searchable: pending rows are indexed first, or matched here when this connection
    // cannot write the index (read-only), newest first ahead of the indexed matches. The watermark comes with the
    // scope in one statement (a statement each cost as much as parsing the query).
    const state = this.searchState(options.sessionId);
    if (state === undefined) return [];
    const { scope } = state;
    const pending = state.indexed !== null && state.total > state.indexed;
    const indexed = !pending || indexPendingIfWritable(this.driver);
    const unindexed = indexed ? [] : matchPending(this.driver, terms, scope?.num);
    const storeRows = state.total;
    const families = this.families.families(terms, storeRows);
    // A word whose family has no indexed term cannot match an indexed message.
    const noMatch = [...families.values()].some((family) => family.length === 0);
    let match = toFts5(terms, "text", families);
    if (scope?.filter === "token") match = `sid : "s${scope.num}" AND ${match}`;
    const ranked = noMatch
      ? []
      : scope?.filter === "lookup"
        ? this.driver.column<number>(RANKED_IN_SESSION_SQL, [match, scope.num, SEARCH_CANDIDATES])
        : this.driver.column<number>(RANKED_SQL, [match, SEARCH_CANDIDATES]);
    return readHits(this.driver, [...unindexed, ...ranked], limit, branch === "active");
  }

  /**
   * How a search is kept to one session (undefined: the session has no messages). The session token in the FTS
   * query lets FTS5 skip other sessions' matches, but bm25 then counts the documents of the token as well — a
   * walk over every message of the session on each query: in a store that is mostly one session (a Durable
   * Object, an everyday single-conversation file) a scoped search cost 5× a store-wide one (8.3 ms against
   * 1.3 ms at 10,000 messages). So: a session alone in the store needs no filter at all; one holding at least
   * three quarters of the rows is filtered by a primary-key lookup per match (other sessions then hold at most a
   * third as many rows, so the lookups never cost much more than that walk); any other keeps the token. The
   * candidates and scores are the same either way. Read with the store's size and the index watermark, in one
   * statement; undefined when the session is not stored (nothing to search).
   */
  private searchState(sessionId: string | undefined): SearchState | undefined {
    if (sessionId === undefined) {
      const row = this.driver.get<{ total: number; indexed: number | null }>(
        `SELECT IFNULL(MAX(seq), 0) AS total, (SELECT indexed_seq FROM agent_search_state WHERE id = 1) AS indexed
         FROM agent_messages`,
      );
      return { total: row?.total ?? 0, indexed: row?.indexed ?? null, scope: undefined };
    }
    // A session id no head can have is not looked up: better-sqlite3 13 binds a lone surrogate as U+FFFD, which
    // would find another tenant's session (see sessionNum).
    if (!canBeStored(sessionId)) return undefined;
    const row = this.driver.get<{
      num: number;
      count: number;
      total: number;
      indexed: number | null;
      alone: number;
    }>(
      `SELECT num, message_count AS count, (SELECT IFNULL(MAX(seq), 0) FROM agent_messages) AS total,
         (SELECT indexed_seq FROM agent_search_state WHERE id = 1) AS indexed,
         NOT EXISTS (SELECT 1 FROM agent_session_heads o WHERE o.num <> h.num AND o.message_count > 0) AS alone
       FROM agent_session_heads h WHERE session_id = ?`,
      [sessionId],
    );
    if (!row) return undefined;
    const filter = row.alone === 1 ? "none" : row.count * 4 >= row.total * 3 ? "lookup" : "token";
    return { total: row.total, indexed: row.indexed, scope: { num: row.num, filter } };
  }

  /** Appends a chain of messages, sets a block and updates the registry row in one transaction (see store/step.ts). */
  writeStep(step: StepWrite): Promise<void> {
    return publishStepWrites(this.feed, step, (write) => writeSqliteStep(this, write));
  }

  /** Indexes pending messages (so readers that cannot write find everything) and closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.feed.close();
    this.idle.close();
    try {
      flushSearchIndex(this.driver);
    } finally {
      this.refuseStatements();
      this.driver.close();
    }
  }
}
