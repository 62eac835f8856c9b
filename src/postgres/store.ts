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
import { type QueryLimits, queryLimits } from "../search/limits.js";
import type { SearchPlan } from "../search/options.js";
import { type StoreVectors, vectorOptions } from "../search/vectors/channel.js";
import { PostgresChangeLog } from "../sql/change-log/postgres.js";
import { PostgresCheckpoints } from "../sql/checkpoints/postgres-store.js";
import { PostgresBlockStore, PostgresEntryStore } from "../sql/context-store/postgres.js";
import { type Executor, type PostgresSource, parsePostgresSource } from "../sql/engines/postgres/client.js";
import { tableNames } from "../sql/engines/postgres/tables.js";
import { postgresFactEngine } from "../sql/facts/postgres-engine.js";
import { PostgresFactVectors } from "../sql/facts/postgres-vectors.js";
import { PostgresAttachments } from "../sql/media/postgres.js";
import { readMessagesById } from "../sql/message-reads/postgres.js";
import { type PostgresPurgeOptions, purgePostgres } from "../sql/purge/postgres.js";
import { rekeyPostgres } from "../sql/rekey-hooks/postgres.js";
import { postgresRoomStores, type RoomStores } from "../sql/rooms/postgres-engine.js";
import { type KeyedTables, postgresKeys } from "../sql/sealing/postgres.js";
import { activePathIds } from "../sql/search/postgres-path-ids.js";
import { PostgresStreams } from "../sql/streams/postgres-store.js";
import { postgresTimedMessages } from "../sql/timed-messages/postgres.js";
import { postgresList } from "../sql/timed-messages/postgres-list.js";
import type { TimedMessages } from "../sql/timed-messages/reads.js";
import { postgresVectors } from "../sql/vectors/postgres.js";
import type { AdoptionReport, AdoptOptions } from "../store/adopt/adopt.js";
import { stopStarted } from "../store/closing.js";
import { NO_KEYRING } from "../store/crypto/keyring.js";
import type { RekeyOptions, RekeyReport } from "../store/crypto/rekey-options.js";
import { logSettings } from "../store/feed/change-rows.js";
import { ChangeFeed } from "../store/feed/feed.js";
import type { PurgeCapableStore, PurgeReport } from "../store/purge.js";
import { runStep } from "../store/step.js";
import { writePolicy } from "../store/write-policy.js";
import { adoptReference } from "./adopt/adopt.js";
import { citusSteps } from "./citus-steps.js";
import { logFactWrites } from "./feed/facts-log.js";
import { openStore } from "./open.js";
import { PostgresSessionRegistry } from "./registry.js";
import type { PostgresStoreOptions } from "./schema.js";
import { searchMessages } from "./search/search.js";
import { PostgresStoreProvider } from "./session-provider.js";
import { writeNewPostgresStep, writePostgresStep } from "./step.js";
import { PostgresTransfer } from "./transfer/export.js";

/** The storage rooms' stores (`graphItems`), assigned from the one list (src/sql/rooms/list.ts): a room adds no line here. */
export interface PostgresStore extends RoomStores {}
/**
 * Sessions, context blocks, searchable entries and the session registry (what `SessionManager` runs on) in
 * PostgreSQL (a `pg` Pool or Client, a PGlite instance, or a connection string). The tables are created and
 * migrated on first use; `PostgresStore.open` does it up front.
 * Writes to one session serialise on its head row; under concurrent appenders the latest leaf is the message of
 * the append that committed last. A single Client is also used for the store's transactions, so prefer a Pool
 * when the application shares the connection.
 */
export class PostgresStore
  implements
    AttachmentCapableStore,
    ContextCapableStore,
    PurgeCapableStore,
    RegistryCapableStore,
    StreamCapableStore,
    TransferCapableStore
{
  readonly backend = "postgres";
  readonly blocks: PostgresBlockStore;
  readonly entries: PostgresEntryStore;
  /** The named sessions of `SessionManager` (table `agent_sessions`). */
  readonly registry: PostgresSessionRegistry;
  /** Offloaded media payloads, each stored once. */
  readonly attachments: PostgresAttachments;
  /** Streaming answers' chunks, kept while they run (`agent-session/ai`'s `resumableStreams`). */
  readonly streams: PostgresStreams;
  /** Facts learned from the conversations, each with its source messages (docs/FACTS.md). */
  readonly facts: SqlFacts;
  /** A graph runtime's checkpoints (agent-session/langgraph, docs/LANGGRAPH.md). */
  readonly checkpoints: PostgresCheckpoints;
  /** Messages read by their own time and found by id alone (agent-session/mastra, docs/MASTRA.md). */
  readonly timedMessages: TimedMessages;
  /** Lossless, streaming export and import of sessions, blocks and entries (what the CLI's export/import use). */
  readonly transfer: PostgresTransfer;
  /** @internal the resolved table names. */
  readonly tables: KeyedTables;
  /** @internal what every write through this store enforces (reserved metadata keys, size cap). */
  readonly policy: WritePolicy;
  private readonly queryLimits: QueryLimits;
  /**
   * What the first use of this store adopted from the reference's tables (`assistant_messages`, …) on the
   * connection's search_path; null before that, when there was nothing to adopt, or when it was adopted before.
   */
  adopted: AdoptionReport | null = null;
  private readonly source: PostgresSource;
  private opening: Promise<Executor> | undefined;
  private closed = false;
  // Set by openExisting: the first use refuses to create tables where there are none (read-only tools).
  private mustExist = false;
  /** @internal the change log shared with other processes, when opened with `changeLog`. */
  readonly changeLog: PostgresChangeLog | undefined;
  /** @internal the change feed every provider of this store publishes to. */
  readonly feed: ChangeFeed;
  /** The vector channel of hybrid recall, with an `embedder` (docs/RECALL.md); undefined without one. */
  readonly vectors: StoreVectors | undefined;

  /** Creates the store without touching the database; the first call connects and migrates. */
  constructor(source: PostgresSource, options: PostgresStoreOptions = {}) {
    this.source = parsePostgresSource(source);
    // Single-node names carry their layout; a distributed store's is set as it opens (ready), on these same names.
    const tables: KeyedTables = tableNames(options);
    // A store opened with a keyring seals (sealing.ts); one without has keys that answer none, so an owner whose
    // content is sealed is refused, never written in clear. The keys go wherever the table names go.
    tables.keys = postgresKeys(options.keyring ?? NO_KEYRING, tables);
    this.tables = tables;
    this.policy = writePolicy(options);
    this.queryLimits = queryLimits(options.queryLimits);
    const ready = () => this.ready();
    this.blocks = new PostgresBlockStore(ready, this.tables);
    this.entries = new PostgresEntryStore(ready, this.tables, this.queryLimits);
    // A registry delete and a transfer import publish themselves: they read the feed and change log made below.
    this.registry = new PostgresSessionRegistry(ready, this.tables, this);
    this.attachments = new PostgresAttachments(ready, this.tables);
    this.streams = new PostgresStreams(ready, this.tables);
    this.facts = new SqlFacts(
      postgresFactEngine(ready, this.tables),
      this.queryLimits,
      new PostgresFactVectors(ready, this.tables),
    );
    this.checkpoints = new PostgresCheckpoints(ready, this.tables);
    Object.assign(this, postgresRoomStores(ready, this.tables));
    this.timedMessages = postgresTimedMessages(
      ready,
      this.tables,
      async (sessionId, ids) => readMessagesById(await ready(), this.tables, sessionId, ids),
      async (...page) => postgresList(await ready(), tables, ...page),
      (step) => writeNewPostgresStep(this, step),
    );
    this.transfer = new PostgresTransfer(ready, this.tables, this.registry, this);
    const log = logSettings(options.changeLog);
    this.changeLog = log
      ? new PostgresChangeLog(ready, this.tables, log, (sessionId, id) =>
          this.session(sessionId).getMessage(id),
        )
      : undefined;
    this.feed = new ChangeFeed(
      () => this.changeLog,
      () => this.changeLog,
    );
    const vectors = vectorOptions(options);
    this.vectors = vectors && postgresVectors(this, vectors);
    this.vectors?.attachFacts(this.facts);
    // After attachFacts: the row follows the local worker's note.
    if (this.changeLog) logFactWrites(this.facts, this.changeLog);
  }

  /**
   * Calls `listener` after every write to any session of this store, in commit order; with `changeLog`, also
   * after other processes' writes (LISTEN/NOTIFY) and from a cursor (see docs/FEED.md).
   */
  subscribe(listener: ChangeListener, options?: SubscribeOptions): Unsubscribe {
    if (this.closed) throw new SessionError("CLOSED", "This PostgresStore was closed");
    return this.feed.subscribe(listener, options);
  }

  /** Opens a store and migrates its tables before returning (construction is sync, the database is not). */
  static async open(source: PostgresSource, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const store = new PostgresStore(source, options);
    await store.ready();
    return store;
  }

  /**
   * Opens a store whose tables exist already, for read-only tools: a database (or schema) without agent-session
   * tables fails with `NOT_FOUND` and nothing is created there. An older agent-session schema is upgraded, as on
   * every open, since this code reads the current one.
   */
  static async openExisting(
    source: PostgresSource,
    options: PostgresStoreOptions = {},
  ): Promise<PostgresStore> {
    const store = new PostgresStore(source, options);
    store.mustExist = true;
    await store.ready();
    return store;
  }

  /** True once `close()` was called; a closed store cannot be used again. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * @internal the connection, once migrated. Every caller shares one promise, so migration runs once per store;
   * a failed attempt is forgotten so that the next call can retry (e.g. after the server came back).
   */
  ready(): Promise<Executor> {
    if (this.closed) return Promise.reject(new SessionError("CLOSED", "This PostgresStore was closed"));
    if (!this.opening) {
      const opening = (async () => {
        // The Citus layout is loaded only by a store opened with `distributed: true` (docs/POSTGRES.md, "One layout
        // object"): a single-node store loads no module of citus/.
        const citus = this.tables.distributed ? await import("./citus/layout.js") : undefined;
        if (citus) this.tables.layout = citus.citusLayout;
        const settings = { mustExist: this.mustExist, vectors: this.vectors !== undefined, cluster: !!citus };
        const { executor, adopted } = await openStore(this.source, this.tables, settings);
        this.adopted = adopted;
        return executor;
      })();
      this.opening = opening;
      opening.catch(() => {
        if (this.opening === opening) this.opening = undefined;
      });
    }
    return this.opening;
  }

  /**
   * Adopts the reference's tables again (idempotent: rows already adopted are skipped and verified), and
   * optionally drops them once everything is verified; null when there are none.
   */
  async adoptReference(options: AdoptOptions = {}): Promise<AdoptionReport | null> {
    return adoptReference(await this.ready(), this.tables, options);
  }

  /** The storage contract for one session (`""` = the default unnamed session). */
  session(sessionId: string, binding?: SessionBinding): PostgresStoreProvider {
    return new PostgresStoreProvider(this, sessionId, binding);
  }

  /**
   * Message search across sessions (or the ones the options name): ranked recall by default, or every word
   * required (`match: "all"`), quoted phrases and word families either way (see search.ts and candidates.ts).
   */
  searchMessages(query: string, options: WithFactHits<StoreSearchOptions>): Promise<SearchItem[]>;
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchHit[]>;
  async searchMessages(
    query: string,
    options: StoreSearchOptions | WithFactHits<StoreSearchOptions> = {},
  ): Promise<SearchItem[]> {
    // A session id no head can have finds nothing (Postgres would refuse U+0000 or match the U+FFFD form); one that
    // is no string is the search plan's to refuse.
    const sessionId: unknown = options?.sessionId;
    if (typeof sessionId === "string" && !canBeStored(sessionId)) return [];
    const executor = await this.ready();
    // The store's facts (search/facts.ts): read by scope, each session's owner from the registry.
    const facts = (q: string, plan: SearchPlan) =>
      factChannel(
        this,
        q,
        plan,
        async (id) => (await this.registry.get(id))?.owner,
        (sessionId, bound) => activePathIds(executor, this.tables, sessionId, bound),
      );
    return searchMessages(executor, this.tables, query, options, this.queryLimits, this.vectors, facts);
  }

  /** Appends a chain of messages, sets a block and updates the registry row in one transaction (see store/step.ts). */
  writeStep(step: StepWrite): Promise<void> {
    return runStep(this, step, (prepared) => writePostgresStep(this, prepared));
  }

  /**
   * Makes the bytes of everything deleted so far unreadable in the store's tables, TOAST and indexes: by default
   * rewrites each table (`VACUUM FULL`, locking out its writes while it runs); see docs/PRIVACY.md for the modes
   * and what no purge reaches (rows an older open snapshot still sees, WAL segments, replicas, backups).
   */
  async purge(options: PostgresPurgeOptions = {}): Promise<PurgeReport> {
    const executor = await this.ready();
    // On a layout that places on Citus workers, its steps run there too.
    const t = this.tables;
    return purgePostgres(executor, t, options, t.layout.placesOnWorkers ? citusSteps(t) : undefined);
  }

  /**
   * Re-seals the owner's messages under the keyring's current key (`key(owner)`), opening them with the one of its
   * `previousKeys(owner)` they are under: batches of one transaction each, resumable after an abort or a crash
   * (docs/PRIVACY.md, "Key rotation").
   */
  rekey(owner: string, options?: RekeyOptions): Promise<RekeyReport> {
    return rekeyPostgres(this, owner, options);
  }

  /** Ends the pool the store created from a connection string; a connection passed in stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    await stopStarted(this); // a chat's learning, cancelled before it can meet a closed store
    if (this.closed) return;
    this.closed = true;
    if (this.vectors) await this.vectors.close(); // no extra tick without an embedder
    this.feed.close();
    const opening = this.opening;
    this.opening = undefined;
    if (!opening) return;
    const executor = await opening.catch(() => undefined);
    await executor?.close();
  }
}
