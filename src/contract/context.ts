// Optional store capability: context blocks and searchable entries (the reference's two context tables).
import type { SessionStore } from "./store.js";

/**
 * Whose a block or an entry is, recorded with its row by the write that creates it: a session's (its id) or an
 * owner's. Ownership is read from this record, never from the key's text (`<label>_<id>` can name two things), so
 * erasure removes a session's rows whatever their label, and a key naming a session id is not that session's
 * unless recorded so. The first recorded write of a row decides it; later writes keep it.
 */
export type ContextRecord = { readonly sessionId: string } | { readonly owner: string };

/**
 * Durable key/value rows for context blocks and cached prompts (the reference's `cf_agents_context_blocks`).
 * Keys are namespaced by the caller, e.g. `memory_<sessionId>`, `_system_prompt_<sessionId>`.
 */
export interface BlockStore {
  /** The stored content, or null when the key was never written (an empty string is a value). */
  getBlock(key: string): Promise<string | null>;
  /** Inserts or replaces a block; `record` says whose it is when the row is new or unrecorded (see ContextRecord). */
  setBlock(key: string, content: string, record?: ContextRecord): Promise<void>;
  /**
   * Writes `next` only when the stored content is still `expected` (null: the key is absent), atomically against
   * every other writer of the store, and answers whether it wrote. Optional: read-modify-write callers that must
   * never lose a concurrent edit (the memory tool) need it; the built-in stores all have it.
   */
  setBlockIf?(key: string, expected: string | null, next: string, record?: ContextRecord): Promise<boolean>;
  /** Removes keys; unknown keys are ignored. */
  deleteBlocks(keys: readonly string[]): Promise<void>;
  /**
   * The keys of the blocks recorded for a session or an owner, in UTF-8 byte order. Optional: the built-in stores
   * have it, and tools that attribute blocks (the MCP server, the CLI, the viewer) read ownership only through it.
   */
  recordedKeys?(record: ContextRecord): Promise<string[]>;
  /**
   * Removes every block and every entry recorded for a session or an owner (an owner's erasure), answering how
   * many of each. Optional, as {@link recordedKeys}.
   */
  deleteRecorded?(record: ContextRecord): Promise<{ blocks: number; entries: number }>;
}

/** A block store that reads and removes rows by their record. */
export type RecordedBlockStore = BlockStore & Required<Pick<BlockStore, "recordedKeys" | "deleteRecorded">>;

/** True when the block store keeps records (see {@link ContextRecord}). */
export function hasRecords(blocks: BlockStore): blocks is RecordedBlockStore {
  return typeof blocks.recordedKeys === "function" && typeof blocks.deleteRecorded === "function";
}

/** One hit of an entry search. */
export interface EntryHit {
  key: string;
  content: string;
}

/** A block store with the conditional write {@link BlockStore.setBlockIf}. */
export type ConditionalBlockStore = BlockStore & Required<Pick<BlockStore, "setBlockIf">>;

/** True when the block store can write on a condition (compare-and-set). */
export function hasConditionalWrite(blocks: BlockStore): blocks is ConditionalBlockStore {
  return typeof blocks.setBlockIf === "function";
}

/** Full-text-searchable keyed entries per block label (the reference's `cf_agents_search_entries`). */
export interface EntryStore {
  /**
   * Inserts or replaces the entry `key` of `label`; its old text is no longer found. `record`: whose it is, as a
   * block's (see ContextRecord); an erasure of that session or owner removes it.
   */
  setEntry(label: string, key: string, content: string, record?: ContextRecord): Promise<void>;
  /** Best matches first, with the query language of {@link SessionStore.searchMessages}. */
  searchEntries(label: string, query: string, limit?: number): Promise<EntryHit[]>;
  countEntries(label: string): Promise<number>;
  /** Removes every entry of `label`. */
  deleteEntries(label: string): Promise<void>;
}

/** A store that can also hold context blocks and searchable entries (what auto-wiring needs). */
export interface ContextCapableStore extends SessionStore {
  readonly blocks: BlockStore;
  readonly entries: EntryStore;
}

/** True when the store can back auto-wired context blocks. */
export function hasContextStorage(store: SessionStore): store is ContextCapableStore {
  const candidate = store as Partial<ContextCapableStore>;
  return typeof candidate.blocks === "object" && typeof candidate.entries === "object";
}
