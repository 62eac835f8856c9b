import { z } from "zod";
import type { AttachmentCapableStore } from "../contract/attachments.js";
import type { ContextCapableStore } from "../contract/context.js";
import type { FactCapableStore } from "../contract/facts.js";
import type { ChangeListener, SubscribeOptions, Unsubscribe } from "../contract/feed.js";
import type { RegistryCapableStore } from "../contract/registry.js";
import type { SearchHit, SearchItem, StoreSearchOptions, WithFactHits } from "../contract/search.js";
import type { StepWrite } from "../contract/step.js";
import type { SessionBinding, WritePolicy, WritePolicyOptions } from "../contract/store.js";
import type { StreamCapableStore } from "../contract/streams.js";
import type { TransferCapableStore } from "../contract/transfer.js";
import { SessionError } from "../errors.js";
import { assertSessionId } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { refusedBy } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { messageRecallTerms } from "../search/date-terms.js";
import { withFactHits } from "../search/fact-fusion.js";
import { factChannel, takesFacts } from "../search/facts.js";
import { nearestFor, takesVectors } from "../search/fusion.js";
import { rankedHits } from "../search/hits.js";
import { type QueryLimits, queryLimits } from "../search/limits.js";
import { type SearchPlan, searchPlan } from "../search/options.js";
import { type StoreVectors, vectorOptions } from "../search/vectors/channel.js";
import type { VectorStoreOptions } from "../search/vectors/types.js";
import { stopStarted } from "../store/closing.js";
import { ChangeFeed } from "../store/feed/feed.js";
import { type PurgeCapableStore, PurgeRecorder, type PurgeReport } from "../store/purge.js";
import { runStep } from "../store/step.js";
import { writePolicy } from "../store/write-policy.js";

import { MemoryAttachments } from "./attachments.js";
import { MemoryBlockStore, MemoryEntryStore } from "./context-store.js";
import { activePath, type MemorySessionData as SessionData } from "./data.js";
import { MemoryFacts } from "./facts.js";
import { MemoryStoreProvider } from "./provider.js";
import { MemorySessionRegistry } from "./registry.js";
import { searchMemory } from "./search.js";
import { writeMemoryStep } from "./step.js";
import { MemoryStreams } from "./streams.js";
import { MemoryTransfer } from "./transfer.js";
import { memoryVectors } from "./vectors.js";

/** Options of a MemoryStore: `reservedMetadataKeys` and `maxMessageBytes` apply to every session of the store. */
export interface MemoryStoreOptions extends WritePolicyOptions, VectorStoreOptions {
  /** Bounds on search queries (length, distinct words); see {@link QueryLimits}. */
  queryLimits?: Partial<QueryLimits>;
}

// The options the MemoryStore's parts parse themselves (write policy, query limits, vectors) pass through; a keyring
// is refused: nothing of a MemoryStore is at rest, so it would encrypt nothing, and accepting it would say it does.
const optionsSchema = z.looseObject(
  {
    keyring: refusedBy<undefined>(
      (value) =>
        value === undefined
          ? undefined
          : "MemoryStore keeps nothing at rest and takes no keyring: encryption at rest is for SqliteStore and PostgresStore",
      () => "unknown_key",
    ).optional(),
  },
  rule("MemoryStore options must be an object"),
);

/** An in-process store with no dependencies: the reference implementation of the storage contract. */
export class MemoryStore
  implements
    AttachmentCapableStore,
    ContextCapableStore,
    FactCapableStore,
    PurgeCapableStore,
    RegistryCapableStore,
    StreamCapableStore,
    TransferCapableStore
{
  readonly backend = "memory";
  /** Context blocks and cached prompts. */
  readonly blocks: MemoryBlockStore;
  /** Searchable entries of search blocks. */
  readonly entries: MemoryEntryStore;
  /** Named sessions for SessionManager (added with the manager). */
  readonly registry: MemorySessionRegistry;
  /** Offloaded media payloads, each stored once. */
  readonly attachments = new MemoryAttachments();
  /** Streaming answers' chunks, kept while they run (`agent-session/ai`'s `resumableStreams`). */
  readonly streams = new MemoryStreams(() => this.assertOpen());
  /** Lossless export and import of whole sessions. */
  readonly transfer: MemoryTransfer;
  /** Facts learned from the conversations, each with its source messages (docs/FACTS.md). */
  readonly facts: MemoryFacts;
  /** @internal the change feed every provider of this store publishes to. */
  readonly feed = new ChangeFeed();
  /** @internal what every write through this store enforces (reserved metadata keys, size cap). */
  readonly policy: WritePolicy;
  /** The vector channel of hybrid recall, with an `embedder` (docs/RECALL.md); undefined without one. */
  readonly vectors: StoreVectors | undefined;
  /** @internal drops a session's vectors at once (an erasure); how many there were. */
  forgetVectors: (sessionId: string) => number = () => 0;
  private readonly data = new Map<string, SessionData>();
  private seq = 0;
  private readonly queryLimits: QueryLimits;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    parseInput(optionsSchema, options);
    this.policy = writePolicy(options);
    this.queryLimits = queryLimits(options.queryLimits);
    this.entries = new MemoryEntryStore(this.queryLimits, () => this.assertOpen());
    this.blocks = new MemoryBlockStore(() => this.assertOpen(), this.entries);
    this.registry = new MemorySessionRegistry(this);
    this.facts = new MemoryFacts(
      {
        assertOpen: () => this.assertOpen(),
        sessionData: (id, create) => this.sessionData(id, create),
        ownedIds: (owner) => this.registry.ownedIds(owner),
      },
      this.queryLimits,
    );
    this.transfer = new MemoryTransfer(this);
    const vectors = vectorOptions(options);
    const channel = vectors && memoryVectors(this, vectors);
    this.vectors = channel?.vectors;
    if (channel) this.forgetVectors = channel.forget;
    this.vectors?.attachFacts(this.facts);
  }

  /** Calls `listener` after every write to any session of this store, in commit order (see docs/FEED.md). */
  subscribe(listener: ChangeListener, options?: SubscribeOptions): Unsubscribe {
    this.assertOpen();
    return this.feed.subscribe(listener, options);
  }

  /** @internal throws `CLOSED` once close() was called: every backend refuses calls after close alike. */
  assertOpen(): void {
    if (this.closed) throw new SessionError("CLOSED", "This MemoryStore was closed");
  }

  /** The storage contract for one session. */
  session(sessionId: string, binding?: SessionBinding): MemoryStoreProvider {
    this.assertOpen();
    assertSessionId(sessionId);
    return new MemoryStoreProvider(this, sessionId, binding);
  }

  /** @internal the data of one session, created on first write. */
  sessionData(sessionId: string, create: boolean): SessionData | undefined {
    this.assertOpen();
    let data = this.data.get(sessionId);
    if (!data && create) {
      data = { rows: new Map(), leaf: null, compactions: [] };
      this.data.set(sessionId, data);
    }
    return data;
  }

  /** @internal */
  nextSeq(): number {
    return ++this.seq;
  }

  /** Ids of the sessions that hold messages or overlays. */
  sessionIds(): string[] {
    this.assertOpen();
    return [...this.data.keys()];
  }

  /** Message search across sessions (or within the ones the options name), best matches first. */
  searchMessages(query: string, options: WithFactHits<StoreSearchOptions>): Promise<SearchItem[]>;
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchHit[]>;
  async searchMessages(
    query: string,
    options: StoreSearchOptions | WithFactHits<StoreSearchOptions> = {},
  ): Promise<SearchItem[]> {
    this.assertOpen();
    const plan = searchPlan(options);
    if (typeof query !== "string") return [];
    // The vector and fact channels are asked only for a search the text channel can answer (content words, within
    // the limits); without them, the query is parsed once, by the search itself. Each keeps to the owner by itself.
    const answerable =
      (takesVectors(this.vectors, plan) || takesFacts(this, plan)) &&
      messageRecallTerms(query, this.queryLimits).length > 0;
    const near = answerable ? await nearestFor(this.vectors, query, plan) : undefined;
    const facts = answerable
      ? await factChannel(
          this,
          query,
          plan,
          async (id) => (await this.registry.get(id))?.owner,
          (sessionId) => this.pathIds(sessionId),
        )
      : undefined;
    const hits = rankedHits(
      searchMemory(this.data, query, keptToOwner(plan, this.registry), this.queryLimits, { near, facts }),
    );
    return plan.facts === "hits" && facts !== undefined ? withFactHits(hits, facts, plan.limit) : hits;
  }

  /** The message ids on one session's active path (an active-branch search's fact sources), or undefined. */
  private pathIds(sessionId: string): string[] {
    const data = this.data.get(sessionId);
    return data === undefined ? [] : [...activePath(data)].map((row) => row.id);
  }

  /** Appends a chain of messages, sets a block and updates the registry row, all or nothing (see store/step.ts). */
  writeStep(step: StepWrite): Promise<void> {
    return runStep(this, step, (prepared) => writeMemoryStep(this, prepared));
  }

  /** Nothing to do: a deleted value is dropped from the heap at once, and no file ever held it (a no-op report). */
  async purge(): Promise<PurgeReport> {
    if (this.closed) throw new SessionError("CLOSED", "This MemoryStore was closed");
    return new PurgeRecorder("memory").report();
  }

  /** Refuses every later call with `CLOSED` (the data is kept for nobody: there is no reopening). */
  async close(): Promise<void> {
    await stopStarted(this); // a chat's learning, cancelled before it can meet a closed store
    this.closed = true;
    if (this.vectors) await this.vectors.close(); // no extra tick without an embedder
    this.feed.close();
  }

  /** @internal removes a session's messages and overlays. */
  dropSession(sessionId: string): void {
    for (const row of this.data.get(sessionId)?.rows.values() ?? []) this.attachments.unlink(row.hashes);
    this.data.delete(sessionId);
    this.streams.forget(sessionId);
  }
}

export { MemoryStoreProvider };

/**
 * The plan kept to its owner's sessions: `sessionIds` becomes the owner's (of those it named, if any), read from the
 * registry's owner map, so the search walks those sessions only; a plan without an owner is returned as it is.
 */
function keptToOwner(plan: SearchPlan, registry: MemorySessionRegistry): SearchPlan {
  if (plan.owner === undefined) return plan;
  const owned = registry.ownedIds(plan.owner);
  const named = plan.sessionIds;
  return {
    ...plan,
    sessionIds: named === undefined ? owned : new Set([...named].filter((id) => owned.has(id))),
  };
}
