/**
 * The shapes every part of the memory backend shares — a message row, a session's data — and the narrow view of
 * the store its parts work through ({@link MemoryBackend}), so no part imports MemoryStore and MemoryStore imports
 * its parts only.
 */

import type { StoredCompaction } from "../contract/message.js";
import type { SessionInfo, SessionRegistry, SessionUsage } from "../contract/registry.js";
import type { SearchHit, StoreSearchOptions } from "../contract/search.js";
import type { StepGuard } from "../contract/step.js";
import { turnTokens } from "../search/date-terms.js";
import { type TextTerms, textTerms } from "../search/text-terms.js";
import type { ProviderContext } from "../store/provider.js";
import type { MemoryAttachments } from "./attachments.js";
import type { MemoryBlockStore, MemoryEntryStore } from "./context-store.js";

/** One stored message of a memory session: its JSON, what search and budgets read, and its place in the tree. */
export interface MemoryMessageRow {
  seq: number;
  id: string;
  role: string;
  json: string;
  /** Payloads the stored JSON points at (see store/media/offload.ts). */
  hashes: readonly string[];
  text: string;
  bytes: number;
  /** The message's token estimate: its length in ranked recall, as the SQL backends' `tokens` column. */
  tokens: number;
  /**
   * The text's words for search (search/text-terms.ts), made by the first search that reads this version of the
   * row: a write that changes the text clears them, a delete drops them with the row.
   */
  terms?: TextTerms | undefined;
  /**
   * The time tokens of the row's time and text (search/date-terms.ts), made and cleared as `terms` are; kept apart
   * from them, so a search that names no time compares no more words than before.
   */
  times?: readonly string[] | undefined;
  createdAt: string;
  parent: MemoryMessageRow | null;
  children: MemoryMessageRow[];
}

/** A memory session: its rows by id, its latest leaf and its compaction overlays. */
export interface MemorySessionData {
  rows: Map<string, MemoryMessageRow>;
  leaf: MemoryMessageRow | null;
  compactions: StoredCompaction[];
}

/** The registry as the parts use it: the contract plus the memory registry's two unawaited writes and owner map. */
export interface MemoryRegistryView extends SessionRegistry {
  restore(info: SessionInfo): boolean;
  ownedIds(owner: string): ReadonlySet<string>;
  stepUsage(id: string, guard: StepGuard, usage: SessionUsage | undefined): void;
}

/** What the parts of the memory backend need of their store (not exported by any entry point). */
export interface MemoryBackend extends ProviderContext {
  readonly attachments: MemoryAttachments;
  readonly blocks: MemoryBlockStore;
  readonly entries: MemoryEntryStore;
  /** The store's facts, as an erasure and a delete of messages reach them (memory/facts.ts). */
  readonly facts: {
    forgetSession(sessionId: string): number;
    forgetMessages(sessionId: string, messageIds: ReadonlySet<string> | null): number;
  };
  readonly registry: MemoryRegistryView;
  assertOpen(): void;
  sessionData(sessionId: string, create: boolean): MemorySessionData | undefined;
  nextSeq(): number;
  sessionIds(): string[];
  dropSession(sessionId: string): void;
  forgetVectors(sessionId: string): number;
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchHit[]>;
}

/** The messages on a session's active path. @internal */
export function activePath(data: MemorySessionData): Set<MemoryMessageRow> {
  const path = new Set<MemoryMessageRow>();
  for (let row = data.leaf; row; row = row.parent) path.add(row);
  return path;
}

/** A row's words for search, made once per version of its text (see {@link MemoryMessageRow.terms}). @internal */
export function rowTerms(row: MemoryMessageRow): TextTerms {
  row.terms ??= textTerms(row.text);
  return row.terms;
}

/** A row's time tokens, as the SQL indexes hold them with its words (see {@link MemoryMessageRow.times}). @internal */
export function rowTimes(row: MemoryMessageRow): readonly string[] {
  row.times ??= turnTokens(row.text, row.createdAt);
  return row.times;
}
