/**
 * The vector channel of hybrid recall (docs/RECALL.md, "Hybrid recall"): what a store with an `embedder` exposes as
 * `store.vectors`, the options that turn it on, and the small interface each backend implements for it.
 */
import type { SearchOptions } from "../../contract/search.js";
import type { SearchFilters } from "../options.js";
import type { FactVectorCounts } from "./fact-vectors.js";

/** The part of an AI SDK embedding model (`openai.embedding(...)`, …) agent-session relies on: `embedMany` takes it. */
export interface EmbeddingModelLike {
  readonly specificationVersion?: string;
  readonly modelId?: string;
  doEmbed(options: never): PromiseLike<unknown>;
}

/**
 * Turns texts into vectors: a plain function (given an `abortSignal` that fires at the call's deadline or when the
 * store closes), or any AI SDK embedding model (use `embedMany` from "ai", loaded lazily).
 */
export type Embedder =
  | ((texts: string[], options: { abortSignal: AbortSignal }) => Promise<number[][]>)
  | EmbeddingModelLike;

/** The vector channel of a store opened with an `embedder`. */
export interface VectorChannel {
  /**
   * Seqs (the stores' internal row numbers, as a search fuses them; {@link nearestMessages} answers ids) of the messages nearest to
   * `query`, best first, at most `limit`, optionally within sessions, a role and a time range (see
   * {@link NearestOptions}); [] when nothing is embedded yet.
   * Never throws for an embedder failure: reports it (see onError) and returns [] so the text channel still answers.
   */
  nearest(query: string, options: NearestOptions): Promise<number[]>;
  /**
   * The messages {@link nearest} answers, best first, as a session id and a message id each (with the seq): one
   * lookup for the whole answer, so a message deleted between the two reads is left out.
   */
  nearestMessages(query: string, options: NearestOptions): Promise<NearestMessage[]>;
  /**
   * Embeds every stored message without a current vector (also for stores made before vectors existed), in batches,
   * reporting progress; resolves with counts.
   */
  backfill(options?: BackfillOptions): Promise<{ embedded: number; failed: number }>;
  /**
   * How many messages have current vectors, how many wait and how many were refused; the same for the store's facts
   * (`facts`); the last embedder error if any.
   */
  status(): Promise<VectorStatus>;
  /**
   * Forgets every vector (for a new embedding model): drops the channel's tables, trigger and state row (in one
   * transaction where the engine allows), so that its next use creates them again for the embedder's size and
   * every message is pending; `backfill()` then embeds them.
   */
  reset(): Promise<void>;
}

/**
 * Which messages {@link VectorChannel.nearest} answers from: at most `limit`, in one session or a set of them, of a
 * role and a time range as a search's `role`, `since` and `until` say (kept to inside the nearest-neighbour read).
 */
export interface NearestOptions extends Pick<SearchOptions, "role" | "since" | "until"> {
  limit: number;
  sessionId?: string;
  /** At most 1,000 sessions (as a search's `sessionIds`); with `sessionId` as well, that session if it is in the set. */
  sessionIds?: readonly string[];
  /**
   * Only the sessions registered with this owner (of those named, if any), kept to inside the read by the registry's
   * owner column however many sessions the owner has (as a search's `owner`).
   */
  owner?: string;
  /**
   * `"active"`: only the sessions' active paths, kept to inside the read (so a long abandoned branch never crowds
   * them out). Of a set, the paths of the sessions with other branches are walked shallowest first while they fit
   * 100,000 rows (ACTIVE_PATH_ROWS); of the whole store, those of the sessions that the nearest messages come from
   * off their paths, read again up to three times (nearestOnActivePaths). A session past those bounds may answer
   * messages off its path, which a search's page leaves out. Default `"all"`.
   */
  branch?: "active" | "all";
}

/** A message {@link VectorChannel.nearestMessages} answers. */
export interface NearestMessage {
  sessionId: string;
  messageId: string;
  /** The store's row number of the message (what {@link VectorChannel.nearest} answers). */
  seq: number;
}

/** The sessions a backend's nearest() keeps to: one, a set (never empty), or neither (every session). */
export type NearestScope =
  | { sessionId?: string; sessionIds?: undefined }
  | { sessionId?: undefined; sessionIds: readonly string[] };

/**
 * What a backend's nearest() reads: the scope, its owner, the filters (normalised as a search plan's), the limit, and whether
 * only the active paths of the scope's sessions count (of a set, within ACTIVE_PATH_ROWS: `pathsWithin` in search/active-paths.ts).
 */
export type NearestRead = NearestScope &
  SearchFilters & { limit: number; activePath: boolean; owner: string | undefined };

/** Options of {@link VectorChannel.backfill}. */
export interface BackfillOptions {
  /** Texts per embedder call (default 64). */
  batchSize?: number;
  /** Called after each batch with the messages done so far and the number that waited when the backfill began. */
  onProgress?: (done: number, total: number) => void;
  /** Stops between batches; the backfill then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Sends the messages recorded as refused (see {@link VectorStatus.failures}) to the embedder again. */
  retryFailed?: boolean;
}

/** A message the embedder refused by itself (others of its batch were embedded): not sent again until its text changes. */
export interface VectorFailure {
  sessionId: string;
  messageId: string;
  /** The embedder's error message (at most 1,000 characters, a cut marked with "…"). */
  reason: string;
}

/** What {@link VectorChannel.status} reports. */
export interface VectorStatus {
  /** Messages whose vector matches their current text (a message without text needs none and counts here). */
  embedded: number;
  /** Messages without a vector, or whose text changed since it was embedded. */
  pending: number;
  /** Messages whose current text the embedder refused (present when there are any): they have no vector. */
  failed?: number;
  /** The newest of those refusals, at most 10, with the embedder's reasons (present with `failed`). */
  failures?: VectorFailure[];
  /**
   * The store's facts (present when it holds any): `embedded` holds a vector or needs none (a sealed fact),
   * `pending` waits for the worker or a backfill, `failed` the embedder refused (no vector, not sent again).
   */
  facts?: FactVectorCounts;
  /** The message of the last embedder failure, cleared by the next success. */
  lastError?: string;
}

/** Store options that turn the vector channel on (memory, SQLite, Postgres and PGlite stores take them). */
export interface VectorStoreOptions {
  /** Embeds messages for the vector channel; without it the store has no `vectors`, no vector table, no work. */
  embedder?: Embedder;
  /**
   * Dimensions of the embedder's vectors; default: learned from its first answer. A vector of another size is an
   * embedder failure (reported, not stored).
   */
  embedDimensions?: number;
  /**
   * Receives embedder failures (and failures of the background work); default: a process warning
   * (`AgentSessionVectorWarning`). The writes that caused the work are never affected.
   */
  onEmbedError?: (error: unknown) => void;
  /**
   * Milliseconds a search waits for its query's embedding (default 5,000): past it the call is aborted, reported
   * (a `TimeoutError`) and the search answers from the text channel alone.
   */
  queryEmbedTimeoutMs?: number;
  /**
   * Milliseconds one embedder call of the background work or `backfill` may take (default 60,000): past it the
   * call is aborted and reported, and its messages stay pending (retried, never recorded as refused).
   */
  embedTimeoutMs?: number;
  /**
   * Where vectors live: `"auto"` (default) uses sqlite-vec / pgvector where they can load and a plain table
   * scored in JavaScript / SQL elsewhere; `"plain"` always uses the plain table.
   */
  vectorIndex?: "auto" | "plain";
}

/** A stored message whose vector is missing or stale, as a backend hands it to the channel. */
export interface PendingText {
  seq: number;
  /** The backend's key of the message's session (a session number, or the id on memory). */
  session: number | string;
  /** The text to embed (the message's text parts), "" when it has none. */
  text: string;
  /** The backend's fingerprint of the stored row the text was read from (null where it keeps none). */
  contentHash: string | null;
  /** The text hash of the vector stored for this seq, if any (an unchanged text is not embedded again). */
  storedTextHash: string | null;
}

/**
 * A vector to store for a message: `vector` null for a message without text or one the embedder refused (then
 * `failure` holds its reason), "keep" to keep the stored one (and its failure, if any).
 */
export interface VectorWrite {
  seq: number;
  session: number | string;
  contentHash: string | null;
  textHash: string;
  text: string;
  vector: Float32Array | null | "keep";
  failure?: string;
}

/** What a backend does for the channel; every method may assume the vector tables exist once `ensure` resolved. */
export interface VectorBackend {
  /** Which index holds the vectors (docs): "memory", "sqlite-vec", "sqlite-blob", "pgvector" or "postgres-array". */
  readonly kind: string;
  /** Creates the bookkeeping tables when missing (cheap when they exist). */
  ensure(): Promise<void>;
  /** Messages with `seq > after` whose vector is missing or stale, oldest first, at most `limit`. */
  pending(after: number, limit: number): Promise<PendingText[]>;
  /** The same for some messages of one session, by id (an update the feed reported). */
  pendingIds(sessionId: string, ids: readonly string[]): Promise<PendingText[]>;
  /** Stores vectors (unit length, all of one size), replacing what the seqs had. */
  write(rows: readonly VectorWrite[]): Promise<void>;
  /**
   * Seqs of current vectors nearest to the unit vector `query`, best first, among the messages of the scope that
   * pass the filters: the filter is part of the read, never stricter than passesFilters (search/options.ts).
   */
  nearest(query: Float32Array, read: NearestRead): Promise<number[]>;
  /** The session and message ids of the stored messages among `seqs`, in one read (a seq gone is left out). */
  messageIds(seqs: readonly number[]): Promise<Map<number, { sessionId: string; messageId: string }>>;
  /**
   * Removes vectors of messages that no longer exist (in one session, or everywhere), in bounded batches: the
   * deletes take them already where the engine allows it, this sweeps what older deletes left.
   */
  prune(sessionId?: string): Promise<void>;
  /** Counts for {@link VectorChannel.status}: current vectors, current refusals, and the rest. */
  counts(): Promise<{ embedded: number; pending: number; failed: number }>;
  /** The newest current refusals, at most `limit`, newest first. */
  failures(limit: number): Promise<VectorFailure[]>;
  /** Forgets every recorded refusal, so those messages are pending again. */
  clearFailures(): Promise<void>;
  /** The size of the stored vectors, or null before the first one. */
  dimensions(): Promise<number | null>;
  /** The newest message seq stored (0 when none): the background work starts after it. */
  maxSeq(): Promise<number>;
  /** Drops every vector table, trigger and state row (what `ensure` creates and the first vector adds), and forgets the size. */
  reset(): Promise<void>;
}

/** What embedding one batch of rows did: written with a vector (or none needed), refused, left pending. */
export interface RowsOutcome {
  embedded: number;
  refused: number;
  left: number;
  /** Why rows were left pending: the embedder failed as a whole (to report and retry). */
  error?: unknown;
}
