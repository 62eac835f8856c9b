import type { AttachmentCapableStore } from "../contract/attachments.js";
import type { ContextCapableStore } from "../contract/context.js";
import type { ChangeListener, SubscribeOptions, Unsubscribe } from "../contract/feed.js";
import type { RegistryCapableStore } from "../contract/registry.js";
import type { SearchHit, SearchItem, StoreSearchOptions, WithFactHits } from "../contract/search.js";
import type { StepWrite } from "../contract/step.js";
import type { SessionBinding, WritePolicy } from "../contract/store.js";
import type { StreamCapableStore } from "../contract/streams.js";
import type { TransferCapableStore } from "../contract/transfer.js";
import { SessionError } from "../errors.js";
import { SqlFacts } from "../facts/sql-facts.js";
import { canBeStored } from "../message/ids.js";
import { factChannel } from "../search/facts.js";
import { queryLimits } from "../search/limits.js";
import { type StoreVectors, vectorOptions } from "../search/vectors/channel.js";
import { SqliteChangeLog } from "../sql/change-log/sqlite.js";
import { SqliteCheckpoints } from "../sql/checkpoints/sqlite-store.js";
import { SqliteBlockStore, SqliteEntryStore } from "../sql/context-store/sqlite.js";
import { closableDriver } from "../sql/engines/sqlite/closable.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { openSqlite, type SqliteOptions, type SqliteSource } from "../sql/engines/sqlite/open.js";
import { sqliteFactEngine } from "../sql/facts/sqlite-engine.js";
import { SqliteFactVectors } from "../sql/facts/sqlite-vectors.js";
import { SqliteAttachments } from "../sql/media/sqlite.js";
import { purgeSqlite } from "../sql/purge/sqlite.js";
import { rekeySqlite } from "../sql/rekey-hooks/sqlite.js";
import { type RoomStores, sqliteRoomStores } from "../sql/rooms/sqlite-engine.js";
import { sqliteKeys } from "../sql/sealing/sqlite.js";
import { flushSearchIndex } from "../sql/search/sqlite-indexing.js";
import { activePathIds } from "../sql/search/sqlite-path-ids.js";
import { SqliteStreams } from "../sql/streams/sqlite-store.js";
import type { TimedMessages } from "../sql/timed-messages/reads.js";
import { sqliteTimedMessages } from "../sql/timed-messages/sqlite.js";
import { sqliteVectors } from "../sql/vectors/sqlite.js";
import { loadSqliteVec } from "../sql/vectors/sqlite-extension.js";
import { dropOrphanTrigger } from "../sql/vectors/sqlite-schema.js";
import { drainGone } from "../sql/vectors/sqlite-sweep.js";
import type { AdoptionReport, AdoptOptions } from "../store/adopt/adopt.js";
import { stopStarted } from "../store/closing.js";
import { NO_KEYRING } from "../store/crypto/keyring.js";
import type { RekeyOptions, RekeyReport } from "../store/crypto/rekey-options.js";
import { logSettings } from "../store/feed/change-rows.js";
import { ChangeFeed } from "../store/feed/feed.js";
import type { PurgeCapableStore, PurgeReport } from "../store/purge.js";
import { runStep } from "../store/step.js";
import { writePolicy } from "../store/write-policy.js";
import { adoptOnOpen, adoptReference } from "./adopt/adopt.js";
import { ensureHead } from "./append.js";
import { DEFAULT_POLL_MS, SqliteRemoteWatch } from "./feed/remote-watch.js";
import { IdleWork } from "./idle-work.js";
import { SqliteSessionRegistry } from "./registry.js";
import { migrate } from "./schema.js";
import { SqliteMessageSearch } from "./search/search.js";
import { SqliteStoreProvider } from "./session-provider.js";
import { writeSqliteStep } from "./step.js";
import { SqliteTransfer } from "./transfer/export.js";

/** The storage rooms' stores (`graphItems`), assigned from the one list (src/sql/rooms/list.ts): a room adds no line here. */
export interface SqliteStore extends RoomStores {}
/** Sessions in one SQLite database: a file path, `:memory:`, a database handle or a `sql`-tag object. */
export class SqliteStore
  implements
    AttachmentCapableStore,
    ContextCapableStore,
    PurgeCapableStore,
    RegistryCapableStore,
    StreamCapableStore,
    TransferCapableStore
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
  /** Streaming answers' chunks, kept while they run (`agent-session/ai`'s `resumableStreams`). */
  readonly streams: SqliteStreams;
  /** Facts learned from the conversations, each with its source messages (docs/FACTS.md). */
  readonly facts: SqlFacts;
  /** A graph runtime's checkpoints (agent-session/langgraph, docs/LANGGRAPH.md). */
  readonly checkpoints: SqliteCheckpoints;
  /** Messages read by their own time and found by id alone (agent-session/mastra, docs/MASTRA.md). */
  readonly timedMessages: TimedMessages;
  /** @internal what every write through this store enforces (reserved metadata keys, size cap). */
  readonly policy: WritePolicy;
  /**
   * What opening this store adopted from the reference's tables (`assistant_messages`, …) found in the same
   * database, or null when there was nothing to adopt (or it was adopted before: it runs once, recorded).
   */
  readonly adopted: AdoptionReport | null;
  private readonly messageSearch: SqliteMessageSearch;
  private closed = false;
  private readonly refuseStatements: () => void;
  private readonly idle: IdleWork;
  /** @internal the change log shared with other processes, when opened with `changeLog`. */
  readonly changeLog: SqliteChangeLog | undefined;
  /** @internal the change feed every provider of this store publishes to. */
  readonly feed: ChangeFeed;
  /** The vector channel of hybrid recall, with an `embedder` (docs/RECALL.md); undefined without one. */
  readonly vectors: StoreVectors | undefined;

  constructor(source: SqliteSource, options: SqliteOptions = {}) {
    this.policy = writePolicy(options);
    const limits = queryLimits(options.queryLimits);
    const raw = openSqlite(source, options);
    try {
      migrate(raw);
      dropOrphanTrigger(raw);
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
      // The keys read their rows through the connection itself, inside whatever transaction is open. A store
      // without a keyring has keys too, that answer none: an owner whose content is sealed is refused, never
      // written in clear (docs/PRIVACY.md, "Refusals").
      keys: sqliteKeys(guarded.driver, options.keyring ?? NO_KEYRING),
    };
    this.idle = idle;
    this.refuseStatements = guarded.close;
    this.blocks = new SqliteBlockStore(this.driver);
    this.entries = new SqliteEntryStore(this.driver, limits);
    // A registry delete and a transfer import publish themselves: they read the feed and change log made below.
    this.registry = new SqliteSessionRegistry(this.driver, this);
    this.attachments = new SqliteAttachments(() => this.driver);
    this.streams = new SqliteStreams(this.driver);
    this.facts = new SqlFacts(sqliteFactEngine(this.driver), limits, new SqliteFactVectors(this.driver));
    this.checkpoints = new SqliteCheckpoints(this.driver);
    Object.assign(this, sqliteRoomStores(this.driver));
    this.timedMessages = sqliteTimedMessages(this.driver);
    this.transfer = new SqliteTransfer(this.driver, this);
    this.messageSearch = new SqliteMessageSearch(
      this.driver,
      limits,
      () => this.vectors,
      (query, plan) =>
        factChannel(
          this,
          query,
          plan,
          async (id) => (await this.registry.get(id))?.owner,
          (sessionId, bound) => activePathIds(this.driver, sessionId, bound),
        ),
    );
    const log = logSettings(options.changeLog);
    this.changeLog = log
      ? new SqliteChangeLog(this.driver, log, (sessionId, id) => this.session(sessionId).getMessage(id))
      : undefined;
    const watch = new SqliteRemoteWatch(this.driver, this.changeLog, log?.pollMs ?? DEFAULT_POLL_MS);
    this.feed = new ChangeFeed(
      () => this.changeLog,
      () => watch,
    );
    const vectors = vectorOptions(options);
    this.vectors = vectors && sqliteVectors(this, vectors);
    this.vectors?.attachFacts(this.facts);
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
  session(sessionId: string, binding?: SessionBinding): SqliteStoreProvider {
    return new SqliteStoreProvider(this, sessionId, binding);
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
   * common word costs the same in a store of a million messages as in a small one (see search.ts).
   */
  searchMessages(query: string, options: WithFactHits<StoreSearchOptions>): Promise<SearchItem[]>;
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchHit[]>;
  searchMessages(
    query: string,
    options: StoreSearchOptions | WithFactHits<StoreSearchOptions> = {},
  ): Promise<SearchItem[]> {
    // Not async itself: an async function returning the search's promise costs two more ticks per search.
    return this.messageSearch.searchMessages(query, options);
  }

  /** Appends a chain of messages, sets a block and updates the registry row in one transaction (see store/step.ts). */
  writeStep(step: StepWrite): Promise<void> {
    return runStep(this, step, (prepared) => writeSqliteStep(this, prepared));
  }

  /**
   * Makes the bytes of everything deleted so far unreadable in the database file and its write-ahead log: merges
   * the search indexes and checkpoints the log (docs/PRIVACY.md). Safe to run from many processes at once.
   */
  async purge(): Promise<PurgeReport> {
    // sqlite-vec's deleted rows are drained when this connection can load the extension.
    return purgeSqlite(this.driver, async () => {
      if (await loadSqliteVec(this.driver)) drainGone(this.driver);
    });
  }

  /**
   * Re-seals every message of `owner` under the keyring's current key, in batches, resumable; the keyring answers
   * the old key in `previousKeys(owner)` until it completes (docs/PRIVACY.md, "Key rotation").
   */
  rekey(owner: string, options?: RekeyOptions): Promise<RekeyReport> {
    return rekeySqlite(this.driver, owner, options);
  }

  /** Indexes pending messages (so readers that cannot write find everything) and closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    await stopStarted(this); // a chat's learning, cancelled before it can meet a closed store
    if (this.closed) return;
    this.closed = true;
    if (this.vectors) await this.vectors.close(); // no extra tick without an embedder
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
