// Optional store capability: a graph runtime's checkpoints (LangGraph's), kept per session as owner data.
import type { SessionStore } from "./store.js";

/** One checkpoint as the runtime serialized it: its bytes, its metadata's bytes, and the serializer's type tags. */
export interface StoredCheckpoint {
  /** The session (a LangGraph thread) it belongs to. */
  sessionId: string;
  /** The subgraph namespace ("" for the root graph). */
  ns: string;
  id: string;
  /** The checkpoint it was made from; null for a thread's first. */
  parentId: string | null;
  type: string;
  data: Uint8Array;
  metadataType: string;
  metadata: Uint8Array;
  /**
   * The version of each channel it holds, as the runtime gave them (stored in clear beside the bytes, as JSON, so a
   * read finds the values without opening them; a version's value is keyed by its text).
   */
  versions: Record<string, string | number>;
}

/** One channel's value at one version; `data` null: the channel had no value at that version. */
export interface StoredChannelValue {
  channel: string;
  version: string;
  type: string;
  data: Uint8Array | null;
}

/** One pending write of a task, stored against a checkpoint. */
export interface StoredWrite {
  taskId: string;
  /** Its place among the task's writes (negative for the runtime's special channels: errors, interrupts). */
  idx: number;
  channel: string;
  type: string;
  data: Uint8Array;
  /** The task's path ("" when the runtime gave none): the first part of the writes' order. */
  taskPath: string;
}

/** A checkpoint read back: the row, the channel values its versions name, and its pending writes (unsorted). */
export interface CheckpointRead extends StoredCheckpoint {
  values: StoredChannelValue[];
  writes: StoredWrite[];
}

/** Which checkpoints a page lists, newest id first. */
export interface CheckpointPageQuery {
  /** One session; absent: every session of `owner`. */
  sessionId?: string | undefined;
  /** Across sessions: only sessions registered to this owner (null: sessions without one). */
  owner?: string | null | undefined;
  ns?: string | undefined;
  id?: string | undefined;
  /** Only ids below this one. */
  before?: string | undefined;
  /** After this (session, ns, id), in the page's order: the next page. */
  after?: { sessionId: string; ns: string; id: string } | undefined;
  limit: number;
}

/**
 * A store's checkpoints (sql/checkpoints/): rows keyed by session, namespace and id, the channel values stored
 * once per version (as a delta of an earlier version where that is smaller), and pending writes. Sealed for an
 * encrypted owner, deleted and erased with the session.
 */
export interface CheckpointStore {
  /**
   * True when a write given an {@link OwnerExpectation} checks it inside its transaction at no extra round trip, so
   * a caller may skip reading the registry before a write it has checked once.
   */
  readonly checksOwner?: boolean;
  /**
   * Stores a checkpoint (replacing one with its id) and the channel values it made, in one transaction; `expect`
   * (where {@link checksOwner}): `CONFLICT` with nothing written unless the session is registered to that owner.
   */
  put(
    checkpoint: StoredCheckpoint,
    values: readonly StoredChannelValue[],
    expect?: OwnerExpectation,
  ): Promise<void>;
  /**
   * Stores pending writes of a checkpoint in one transaction: a write whose (task, idx) is stored already is kept
   * unless `replace` (the runtime's special channels replace theirs); `expect` as {@link put}'s.
   */
  putWrites(
    sessionId: string,
    ns: string,
    checkpointId: string,
    writes: readonly StoredWrite[],
    replace: boolean,
    expect?: OwnerExpectation,
  ): Promise<void>;
  /** The checkpoint `id` (null: the newest) of a session's namespace, or null. */
  get(sessionId: string, ns: string, id: string | null): Promise<CheckpointRead | null>;
  /** A page of checkpoints, newest id first (by session and namespace across sessions). */
  page(query: CheckpointPageQuery): Promise<CheckpointRead[]>;
  /** The namespaces a session holds checkpoints in, in byte order (an export walks them one by one). */
  namespaces(sessionId: string): Promise<string[]>;
  /** The stored rows and payload bytes of a session's checkpoints (what a test or a benchmark reads). */
  footprint(sessionId: string): Promise<{ rows: number; bytes: number }>;
}

/** The owner a write requires its session to be registered to (null: registered with none). */
export interface OwnerExpectation {
  owner: string | null;
}

/** A {@link SessionStore} with {@link CheckpointStore}. */
export interface CheckpointCapableStore extends SessionStore {
  checkpoints: CheckpointStore;
}

/** True when the store keeps checkpoints. */
export function hasCheckpoints(store: SessionStore): store is CheckpointCapableStore {
  const checkpoints = (store as Partial<CheckpointCapableStore>).checkpoints;
  return typeof checkpoints === "object" && checkpoints !== null && typeof checkpoints.put === "function";
}
