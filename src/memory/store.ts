import { SessionError } from "../errors.js";
import {
  assertId,
  assertParentId,
  assertSessionId,
  assertValidMessage,
  messageText,
  parseMessage,
  serializeMessage,
  TAKES_SERIALIZED,
  utf8Length,
} from "../message.js";
import { parseQuery, scoreText } from "../search/query.js";
import { newCompaction } from "../store/compactions.js";
import { searchBranch, searchLimit } from "../store/limits.js";
import { applyOverlays } from "../store/overlays.js";
import { recentWindow } from "../store/recent.js";
import type {
  ContextCapableStore,
  RegistryCapableStore,
  StoreSearchOptions,
  TransferCapableStore,
} from "../store/types.js";
import type {
  AppendOptions,
  AppendResult,
  CompactionDetails,
  HistoryRowStat,
  RecentHistoryResult,
  SearchOptions,
  SearchResult,
  SessionMessage,
  SessionProvider,
  StoredCompaction,
} from "../types.js";
import { estimateMessageTokens } from "../utils/tokens.js";
import { MemoryBlockStore, MemoryEntryStore } from "./context-store.js";
import { MemorySessionRegistry } from "./registry.js";
import { MemoryTransfer } from "./transfer.js";

interface Row {
  seq: number;
  id: string;
  role: string;
  json: string;
  text: string;
  bytes: number;
  createdAt: string;
  parent: Row | null;
  children: Row[];
}

interface SessionData {
  rows: Map<string, Row>;
  leaf: Row | null;
  compactions: StoredCompaction[];
}

/** @internal the row and session shapes, for the transfer module. */
export type { Row as MemoryMessageRow, SessionData as MemorySessionData };

/** An in-process store with no dependencies: the reference implementation of the storage contract. */
export class MemoryStore implements ContextCapableStore, RegistryCapableStore, TransferCapableStore {
  readonly backend = "memory";
  /** Context blocks and cached prompts. */
  readonly blocks = new MemoryBlockStore(() => this.assertOpen());
  /** Searchable entries of search blocks. */
  readonly entries = new MemoryEntryStore(() => this.assertOpen());
  /** Named sessions for SessionManager (added with the manager). */
  readonly registry: MemorySessionRegistry = new MemorySessionRegistry(this);
  /** Lossless export and import of whole sessions. */
  readonly transfer: MemoryTransfer = new MemoryTransfer(this);
  private readonly data = new Map<string, SessionData>();
  private seq = 0;
  private closed = false;

  /** @internal throws `CLOSED` once close() was called: every backend refuses calls after close alike. */
  assertOpen(): void {
    if (this.closed) throw new SessionError("CLOSED", "This MemoryStore was closed");
  }

  /** The storage contract for one session. */
  session(sessionId: string): MemorySessionProvider {
    this.assertOpen();
    assertSessionId(sessionId);
    return new MemorySessionProvider(this, sessionId);
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

  /** Full-text search across sessions. */
  async searchMessages(query: string, options: StoreSearchOptions = {}): Promise<SearchResult[]> {
    this.assertOpen();
    const limit = searchLimit(options.limit);
    const branch = searchBranch(options.branch);
    if (typeof query !== "string") return [];
    const terms = parseQuery(query);
    if (terms.length === 0 || limit === 0) return [];
    const hits: { row: Row; sessionId: string; score: number; active: boolean }[] = [];
    const sessions =
      options.sessionId === undefined
        ? [...this.data.entries()]
        : [[options.sessionId, this.data.get(options.sessionId)] as const];
    for (const [sessionId, data] of sessions) {
      if (!data) continue;
      const active = activePath(data);
      for (const row of data.rows.values()) {
        const onPath = active.has(row);
        if (branch === "active" && !onPath) continue;
        const score = scoreText(terms, row.text);
        if (score > 0) hits.push({ row, sessionId, score, active: onPath });
      }
    }
    hits.sort((a, b) => b.score - a.score || b.row.seq - a.row.seq);
    return hits.slice(0, limit).map(({ row, sessionId, active }) => ({
      id: row.id,
      role: row.role,
      content: row.text,
      createdAt: row.createdAt,
      sessionId,
      onActivePath: active,
    }));
  }

  /** Refuses every later call with `CLOSED` (the data is kept for nobody: there is no reopening). */
  async close(): Promise<void> {
    this.closed = true;
  }

  /** @internal removes a session's messages and overlays. */
  dropSession(sessionId: string): void {
    this.data.delete(sessionId);
  }
}

function activePath(data: SessionData): Set<Row> {
  const path = new Set<Row>();
  for (let row = data.leaf; row; row = row.parent) path.add(row);
  return path;
}

function pathTo(leaf: Row | null): Row[] {
  const path: Row[] = [];
  for (let row = leaf; row; row = row.parent) path.push(row);
  return path.reverse();
}

function toMessages(rows: Row[]): SessionMessage[] {
  const messages: SessionMessage[] = [];
  for (const row of rows) {
    const message = parseMessage(row.json);
    if (message) messages.push(message);
  }
  return messages;
}

/** The storage contract of one session in a {@link MemoryStore}. */
export class MemorySessionProvider implements SessionProvider {
  /** @internal it serialises a message before anything else touches it (see TAKES_SERIALIZED). */
  readonly [TAKES_SERIALIZED]: object = MemorySessionProvider.prototype;

  constructor(
    private readonly store: MemoryStore,
    readonly sessionId: string,
  ) {}

  private get data(): SessionData | undefined {
    return this.store.sessionData(this.sessionId, false);
  }

  private resolveLeaf(leafId: string | null | undefined): Row | null {
    const data = this.data;
    if (!data) return null;
    if (leafId === undefined || leafId === null) return data.leaf;
    return data.rows.get(leafId) ?? null;
  }

  async getMessage(id: string): Promise<SessionMessage | null> {
    const row = this.data?.rows.get(id);
    return row ? parseMessage(row.json) : null;
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    const leaf = this.resolveLeaf(leafId);
    if (!leaf) return [];
    return applyOverlays(toMessages(pathTo(leaf)), this.data?.compactions ?? []);
  }

  async getLatestLeaf(): Promise<SessionMessage | null> {
    const leaf = this.data?.leaf;
    return leaf ? parseMessage(leaf.json) : null;
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    const row = this.data?.rows.get(messageId);
    return row ? toMessages(row.children) : [];
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    let length = 0;
    for (let row = this.resolveLeaf(leafId); row; row = row.parent) length++;
    return length;
  }

  async getRecentHistory(
    leafId: string | null | undefined,
    maxContentBytes: number,
    minRecentMessages?: number,
  ): Promise<RecentHistoryResult> {
    const path = pathTo(this.resolveLeaf(leafId));
    const window = recentWindow(
      path.map((row) => row.bytes),
      maxContentBytes,
      minRecentMessages,
    );
    const rows = path.slice(path.length - window.count);
    return {
      messages: applyOverlays(toMessages(rows), this.data?.compactions ?? []),
      truncated: window.count < path.length,
      totalContentBytes: window.totalBytes,
    };
  }

  async getHistoryRowStats(leafId?: string | null): Promise<HistoryRowStat[]> {
    return pathTo(this.resolveLeaf(leafId)).map((row) => ({ id: row.id, role: row.role, bytes: row.bytes }));
  }

  async getContextTokens(leafId?: string | null): Promise<number> {
    return estimateMessageTokens(await this.getHistory(leafId));
  }

  async appendMessage(
    message: SessionMessage,
    parentId?: string | null,
    options?: AppendOptions,
  ): Promise<AppendResult> {
    assertValidMessage(message);
    assertParentId(parentId);
    const json = serializeMessage(message);
    const data = this.store.sessionData(this.sessionId, true)!;
    if (data.rows.has(message.id)) return { inserted: false };
    if (options?.expectedLeafId !== undefined && (data.leaf?.id ?? null) !== options.expectedLeafId) {
      throw new SessionError(
        "CONFLICT",
        `The latest leaf of session "${this.sessionId}" is ${JSON.stringify(data.leaf?.id ?? null)}, expected ${JSON.stringify(options.expectedLeafId)}`,
      );
    }
    let parent: Row | null;
    if (parentId === undefined) parent = data.leaf;
    else if (parentId === null) parent = null;
    else {
      parent = data.rows.get(parentId) ?? null;
      if (!parent) {
        throw new SessionError(
          "PARENT_NOT_FOUND",
          `Parent message "${parentId}" is not in session "${this.sessionId}"`,
        );
      }
    }
    const row: Row = {
      seq: this.store.nextSeq(),
      id: message.id,
      role: message.role,
      json,
      text: messageText(message),
      bytes: utf8Length(json),
      createdAt: new Date().toISOString(),
      parent,
      children: [],
    };
    parent?.children.push(row);
    data.rows.set(row.id, row);
    data.leaf = row;
    return { inserted: true };
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    assertValidMessage(message);
    const json = serializeMessage(message);
    const row = this.data?.rows.get(message.id);
    if (!row)
      throw new SessionError("NOT_FOUND", `Message "${message.id}" is not in session "${this.sessionId}"`);
    row.json = json;
    row.role = message.role;
    row.text = messageText(message);
    row.bytes = utf8Length(json);
  }

  async deleteMessages(messageIds: string[]): Promise<void> {
    if (!Array.isArray(messageIds)) {
      throw new SessionError("INVALID_ARGUMENT", "deleteMessages expects an array of message ids");
    }
    for (const id of messageIds) assertId(id, "A message id");
    const data = this.data;
    if (!data) return;
    const deleted = new Set<string>();
    for (const id of messageIds) {
      const row = data.rows.get(id);
      if (!row) continue;
      // Splice: children move up to the deleted message's parent, keeping their order by storage sequence.
      for (const child of row.children) child.parent = row.parent;
      if (row.parent) {
        const siblings = row.parent.children.filter((c) => c !== row).concat(row.children);
        row.parent.children = siblings.sort((a, b) => a.seq - b.seq);
      }
      data.rows.delete(id);
      deleted.add(id);
      if (data.leaf === row) data.leaf = null;
    }
    if (deleted.size === 0) return;
    data.compactions = data.compactions.filter(
      (c) => !deleted.has(c.fromMessageId) && !deleted.has(c.toMessageId),
    );
    if (data.leaf === null) data.leaf = newestChildless(data);
  }

  async clearMessages(): Promise<void> {
    this.store.dropSession(this.sessionId);
  }

  async addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
    details?: CompactionDetails,
  ): Promise<StoredCompaction> {
    const compaction = newCompaction(summary, fromMessageId, toMessageId, details);
    this.store.sessionData(this.sessionId, true)!.compactions.push(compaction);
    return structuredClone(compaction);
  }

  async getCompactions(): Promise<StoredCompaction[]> {
    return structuredClone(this.data?.compactions ?? []);
  }

  async searchMessages(query: string, limit?: number, options?: SearchOptions): Promise<SearchResult[]> {
    return this.store.searchMessages(query, {
      ...options,
      ...(limit === undefined ? {} : { limit }),
      sessionId: this.sessionId,
    });
  }
}

function newestChildless(data: SessionData): Row | null {
  let best: Row | null = null;
  for (const row of data.rows.values()) {
    if (row.children.length === 0 && (!best || row.seq > best.seq)) best = row;
  }
  return best;
}
