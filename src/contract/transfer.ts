// Optional store capability: lossless, streaming export and import of whole sessions and store-wide rows.
import type { StoredCheckpoint, StoredWrite } from "./checkpoints.js";
import type { StoredCompaction } from "./message.js";
import type { SessionInfo } from "./registry.js";
import type { SessionStore } from "./store.js";

/** A session's header in a transfer: its registry row, exactly, and its latest leaf. */
export interface TransferSession {
  id: string;
  /** The registry row with its timestamps and usage counters; null for a session that is not registered. */
  info: SessionInfo | null;
  /** The latest leaf (the active branch's tip), or null when the active path is empty. */
  leafId: string | null;
}

/** One stored message with its tree link and original time. */
export interface TransferMessage {
  id: string;
  /** The message it was appended under, or null for a root. */
  parentId: string | null;
  role: string;
  /** ISO-8601 time the message was stored (`toISOString()` form). */
  createdAt: string;
  /** The stored JSON of the message, verbatim. */
  content: string;
}

/** An offloaded payload a transferred message points at, sent once before the first message that needs it. */
export interface TransferAttachment {
  /** SHA-256 of `bytes`, hex (an import checks it). */
  hash: string;
  bytes: Uint8Array;
}

/**
 * A channel's value at a version, carried once per session, namespace, channel and version (by the first checkpoint
 * of the stream naming it): its bytes, or with `base` the bytes that follow the first `prefix` bytes of the value of
 * `base.version`, the version of the same channel and namespace the stream carried just before this one.
 */
export interface TransferChannelValue {
  channel: string;
  version: string;
  type: string;
  /** The bytes (null: the channel had no value at this version), or with `base` the bytes after its prefix. */
  data: Uint8Array | null;
  base?: { version: string; prefix: number };
}

/**
 * A checkpoint of a session (a LangGraph thread), opened: its row's bytes, the channel values it is the first of the
 * stream to name, and its pending writes.
 */
export interface TransferCheckpoint extends Omit<StoredCheckpoint, "sessionId"> {
  values: TransferChannelValue[];
  writes: StoredWrite[];
}

/**
 * One item of a session's transfer stream: the header first, then messages (parents first, each payload as an
 * `attachment` item before the first message pointing at it), then overlays, then checkpoints (namespace by namespace, newest first).
 */
export type TransferItem =
  | { kind: "session"; session: TransferSession }
  | { kind: "attachment"; attachment: TransferAttachment }
  | { kind: "message"; message: TransferMessage }
  | { kind: "compaction"; compaction: StoredCompaction }
  | { kind: "checkpoint"; checkpoint: TransferCheckpoint };

/**
 * Whose a transferred block or entry is (context.ts ContextRecord): at most one of the two. A row without either is
 * given one on import where the old suffix rule is unambiguous, as migration 22 gave the rows stored before it.
 */
export interface TransferRecord {
  sessionId?: string;
  owner?: string;
}

/** One store-wide row: a context block (cached prompts included) or a searchable entry of a search block. */
export type TransferRow =
  | ({ kind: "block"; key: string; content: string } & TransferRecord)
  | ({ kind: "entry"; label: string; key: string; content: string } & TransferRecord);

/** How many rows an import wrote and how many it found already present (ids are the identity). */
export interface ImportCounts {
  inserted: number;
  skipped: number;
}

/** What importing one session did. */
export interface SessionImportResult {
  sessionId: string;
  /** True when the registry row was written (false: absent from the stream, or already registered). */
  registered: boolean;
  messages: ImportCounts;
  compactions: ImportCounts;
  /** Checkpoints written (a stored one with the same id is replaced, as a `put` replaces it); absent: none carried. */
  checkpoints?: number;
}

/** The stored size of one session. */
export interface SessionFootprint {
  id: string;
  registered: boolean;
  messages: number;
  compactions: number;
  /** UTF-8 bytes of the stored message JSON. */
  bytes: number;
  /** The library's token estimate of the stored messages (every branch, overlays not applied). */
  tokens: number;
  leafId: string | null;
}

/**
 * Optional store capability: lossless, streaming export and import of whole sessions, so data moves between
 * backends with message ids, tree links, timestamps, overlays, registry rows and blocks intact. Nothing here
 * materialises a whole store: every listing is an async iterable read in pages. Imports are idempotent: a row
 * whose id is already stored is kept as it is and counted as skipped.
 */
export interface SessionTransfer {
  /**
   * Every registered session, oldest activity first, then every other session holding data, by id (also one
   * registered after the first part read past its place). Read in pages: a session written meanwhile moves behind
   * the read position and can be named again (the CLI skips repeats); one that held data or a registry row
   * throughout is never left out.
   */
  sessionIds(): AsyncIterable<string>;
  /** Sizes of one session, or null when nothing is stored or registered under the id. */
  footprint(sessionId: string): Promise<SessionFootprint | null>;
  /** One session: its header, its messages in storage order (parents first), its overlays oldest first. */
  exportSession(sessionId: string): AsyncIterable<TransferItem>;
  /**
   * Writes one session from a stream that starts with its header. A message's parent must already be stored
   * (`PARENT_NOT_FOUND` otherwise); when any message was inserted, the latest leaf becomes the header's.
   */
  importSession(items: AsyncIterable<TransferItem>): Promise<SessionImportResult>;
  /** Every context block by key (UTF-8 byte order), then every searchable entry in storage order. */
  exportRows(): AsyncIterable<TransferRow>;
  /** Writes blocks and entries whose keys are not stored yet. */
  importRows(rows: AsyncIterable<TransferRow>): Promise<ImportCounts>;
}

/** A store that can export and import sessions losslessly (memory, SQLite and Postgres). */
export interface TransferCapableStore extends SessionStore {
  readonly transfer: SessionTransfer;
}

/** True when the store offers {@link SessionTransfer}. */
export function hasTransfer(store: SessionStore): store is TransferCapableStore {
  const transfer = (store as Partial<TransferCapableStore>).transfer;
  return typeof transfer === "object" && transfer !== null && typeof transfer.exportSession === "function";
}
