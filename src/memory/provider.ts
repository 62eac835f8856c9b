import { SessionError } from "../errors.js";
import { assertId, assertParentId, messageText, parseMessage, utf8Length } from "../message.js";
import { newCompaction } from "../store/compactions.js";
import { observeProvider } from "../store/feed/observe.js";
import { walkHistory } from "../store/history-stream.js";
import { hydrateSync, offloadMessage } from "../store/media/offload.js";
import { applyOverlays } from "../store/overlays.js";
import { preparedJson, TAKES_PREPARED_JSON } from "../store/prepared-json.js";
import { recentHistory } from "../store/recent.js";
import { importTime, prepareAppend, prepareServerWrite, withStored } from "../store/write-policy.js";
import type {
  AppendOptions,
  AppendResult,
  CompactionDetails,
  HistoryReadOptions,
  HistoryRowStat,
  ImportMessageOptions,
  RecentHistoryResult,
  SearchOptions,
  SearchResult,
  SessionMessage,
  SessionProvider,
  StoredCompaction,
  UpdateResult,
  UpsertOptions,
  UpsertResult,
} from "../types.js";
import { estimateMessageTokens } from "../utils/tokens.js";
import { MemoryPathBackend } from "./history-stream.js";
import type { MemoryStore, MemoryMessageRow as Row, MemorySessionData as SessionData } from "./store.js";

/** The messages on a session's active path. @internal */
export function activePath(data: SessionData): Set<Row> {
  const path = new Set<Row>();
  for (let row = data.leaf; row; row = row.parent) path.add(row);
  return path;
}

function pathTo(leaf: Row | null): Row[] {
  const path: Row[] = [];
  for (let row = leaf; row; row = row.parent) path.push(row);
  return path.reverse();
}

/** Parsed messages of rows (corrupt rows skipped) with their payloads restored in one lookup. */
function toMessages(store: MemoryStore, rows: readonly Row[]): SessionMessage[] {
  const messages = rows.map((row) => parseMessage(row.json)).filter((m): m is SessionMessage => m !== null);
  return hydrateSync(messages, (hashes) => store.attachments.load(hashes));
}

function toMessage(store: MemoryStore, row: Row | null | undefined): SessionMessage | null {
  return row ? (toMessages(store, [row])[0] ?? null) : null;
}

/** The storage contract of one session in a {@link MemoryStore}. */
export class MemorySessionProvider implements SessionProvider {
  /** @internal its writes take the JSON a Session already made of the message (see prepared-json.ts). */
  readonly [TAKES_PREPARED_JSON]: object = MemorySessionProvider.prototype;

  constructor(
    private readonly store: MemoryStore,
    readonly sessionId: string,
  ) {
    observeProvider(this, store.feed);
  }

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
    return toMessage(this.store, this.data?.rows.get(id));
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    const leaf = this.resolveLeaf(leafId);
    if (!leaf) return [];
    return applyOverlays(toMessages(this.store, pathTo(leaf)), this.data?.compactions ?? []);
  }

  async getLatestLeaf(): Promise<SessionMessage | null> {
    return toMessage(this.store, this.data?.leaf);
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    const row = this.data?.rows.get(messageId);
    return row ? toMessages(this.store, row.children) : [];
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
    const paths = new MemoryPathBackend(this.store, this.data);
    return recentHistory(paths, leafId, maxContentBytes, minRecentMessages, () => paths.compactions());
  }

  /** The path in bounded batches, parsed and restored batch by batch (src/store/history-stream.ts). */
  historyBatches(options?: HistoryReadOptions): AsyncIterable<SessionMessage[]> {
    return walkHistory(new MemoryPathBackend(this.store, this.data), options);
  }

  async getHistoryRowStats(leafId?: string | null): Promise<HistoryRowStat[]> {
    return pathTo(this.resolveLeaf(leafId)).map((row) => {
      const message = parseMessage(row.json);
      const tokens = message ? estimateMessageTokens([message]) : 0;
      return { id: row.id, role: row.role, bytes: row.bytes, tokens };
    });
  }

  async getContextTokens(leafId?: string | null): Promise<number> {
    return estimateMessageTokens(await this.getHistory(leafId));
  }

  async appendMessage(
    message: SessionMessage,
    parentId?: string | null,
    options?: AppendOptions,
  ): Promise<AppendResult> {
    const write = prepareAppend(message, parentId, this.store.policy, options?.source, preparedJson(options));
    if (!write) return { inserted: false, message };
    const { message: stored, json } = write;
    const data = this.store.sessionData(this.sessionId, true)!;
    const existing = data.rows.get(stored.id);
    if (existing) return withStored({ inserted: false }, this.storedJson(existing));
    if (options?.expectedLeafId !== undefined && (data.leaf?.id ?? null) !== options.expectedLeafId) {
      throw new SessionError(
        "CONFLICT",
        `The latest leaf of session "${this.sessionId}" is ${JSON.stringify(data.leaf?.id ?? null)}, expected ${JSON.stringify(options.expectedLeafId)}`,
      );
    }
    this.insert(data, stored, json, this.parentRow(data, parentId), new Date().toISOString());
    return withStored({ inserted: true }, json);
  }

  async upsertMessage(
    message: SessionMessage,
    parentId?: string | null,
    options?: UpsertOptions,
  ): Promise<UpsertResult> {
    const write = prepareAppend(message, parentId, this.store.policy, options?.source, preparedJson(options));
    if (!write) return { inserted: false, updated: false, message };
    const { message: stored, json } = write;
    const data = this.store.sessionData(this.sessionId, true)!;
    const row = data.rows.get(stored.id);
    if (row) return withStored({ inserted: false, ...this.replace(row, stored, json) }, json);
    this.insert(data, stored, json, this.parentRow(data, parentId), new Date().toISOString());
    return withStored({ inserted: true, updated: false }, json);
  }

  async importMessage(message: SessionMessage, options: ImportMessageOptions = {}): Promise<AppendResult> {
    const { json } = prepareServerWrite(message, this.store.policy, preparedJson(options));
    assertParentId(options.parentId);
    const createdAt = importTime(options.createdAt);
    const data = this.store.sessionData(this.sessionId, true)!;
    const existing = data.rows.get(message.id);
    if (existing) return withStored({ inserted: false }, this.storedJson(existing));
    this.insert(data, message, json, this.parentRow(data, options.parentId), createdAt);
    return withStored({ inserted: true }, json);
  }

  /** Replaces a stored message by id (`options` is internal: a Session's JSON hand-off). */
  async updateMessage(message: SessionMessage, options?: object): Promise<UpdateResult> {
    const { message: stored, json } = prepareServerWrite(message, this.store.policy, preparedJson(options));
    const row = this.data?.rows.get(message.id);
    if (!row)
      throw new SessionError("NOT_FOUND", `Message "${message.id}" is not in session "${this.sessionId}"`);
    return withStored(this.replace(row, stored, json), json);
  }

  // The JSON a read of the row returns: its payloads restored.
  private storedJson(row: Row): string {
    return row.hashes.length === 0 ? row.json : JSON.stringify(toMessage(this.store, row));
  }

  private parentRow(data: SessionData, parentId: string | null | undefined): Row | null {
    if (parentId === undefined) return data.leaf;
    if (parentId === null) return null;
    const parent = data.rows.get(parentId);
    if (!parent) {
      throw new SessionError(
        "PARENT_NOT_FOUND",
        `Parent message "${parentId}" is not in session "${this.sessionId}"`,
      );
    }
    return parent;
  }

  private insert(
    data: SessionData,
    message: SessionMessage,
    json: string,
    parent: Row | null,
    createdAt: string,
  ): void {
    const stored = offloadMessage(message, json);
    const row: Row = {
      seq: this.store.nextSeq(),
      id: message.id,
      role: message.role,
      json: stored.content,
      hashes: stored.attachments.map((a) => a.hash),
      text: messageText(message),
      bytes: utf8Length(stored.content),
      createdAt,
      parent,
      children: [],
    };
    this.store.attachments.link(stored.attachments);
    parent?.children.push(row);
    data.rows.set(row.id, row);
    data.leaf = row;
  }

  // Identical JSON is identical content: nothing is written (the other backends compare a stored hash).
  private replace(row: Row, message: SessionMessage, json: string): { updated: boolean } {
    const stored = offloadMessage(message, json);
    if (row.json === stored.content) return { updated: false };
    // Link the new payloads before dropping the old links, so a payload kept by the update is never deleted.
    this.store.attachments.link(stored.attachments);
    this.store.attachments.unlink(row.hashes);
    row.json = stored.content;
    row.hashes = stored.attachments.map((a) => a.hash);
    row.role = message.role;
    row.text = messageText(message);
    row.bytes = utf8Length(stored.content);
    return { updated: true };
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
      this.store.attachments.unlink(row.hashes);
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
