import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import type {
  AppendOptions,
  AppendResult,
  HistoryReadOptions,
  HistoryRowStat,
  RecentHistoryResult,
  SessionProvider,
  UpdateResult,
  UpsertResult,
} from "../contract/provider.js";
import type { SearchOptions, SearchResult } from "../contract/search.js";
import type { SessionBinding } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { parseMessage } from "../message/json.js";
import { messageText } from "../message/text.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { carriesTool, mayCarryTool, toolNamesArg, toolNeedles } from "../message/tool-parts.js";
import { utf8Length } from "../runtime/bytes.js";
import { walkHistory } from "../store/history-stream.js";
import { hydrateSync, offloadMessage } from "../store/media/offload.js";
import { applyOverlays } from "../store/overlays.js";
import { type KeepReserved, StoreProvider } from "../store/provider.js";
import { recentHistory } from "../store/recent.js";
import type { PreparedWrite } from "../store/write-policy.js";
import type { Logged, Written } from "../store/written.js";
import type {
  MemoryBackend as MemoryStore,
  MemoryMessageRow as Row,
  MemorySessionData as SessionData,
} from "./data.js";
import { MemoryPathBackend } from "./history-stream.js";

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

/** `CONFLICT`: an append's expected latest leaf is not the session's. @internal */
export function leafConflict(
  sessionId: string,
  actual: string | null,
  expected: string | null,
): SessionError {
  return new SessionError(
    "CONFLICT",
    `The latest leaf of session "${sessionId}" is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`,
  );
}

/** `PARENT_NOT_FOUND`: an append names a parent the session does not hold. @internal */
export function parentNotFound(parentId: string, sessionId: string): SessionError {
  return new SessionError(
    "PARENT_NOT_FOUND",
    `Parent message "${parentId}" is not in session "${sessionId}"`,
  );
}

/** The storage contract of one session in a {@link MemoryStore}. */
export class MemoryStoreProvider extends StoreProvider implements SessionProvider {
  constructor(
    private readonly store: MemoryStore,
    sessionId: string,
    binding?: SessionBinding,
  ) {
    super(store, sessionId, binding);
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

  async getToolMessages(toolNames: readonly string[], leafId?: string | null): Promise<SessionMessage[]> {
    const names = toolNamesArg(toolNames);
    const needles = toolNeedles(names);
    const rows = pathTo(this.resolveLeaf(leafId)).filter((row) => mayCarryTool(row.json, needles));
    return toMessages(this.store, rows).filter((message) => carriesTool(message, names));
  }

  async getContextTokens(leafId?: string | null): Promise<number> {
    return estimateMessageTokens(await this.getHistory(leafId));
  }

  protected async writeAppend(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    options: AppendOptions | undefined,
  ): Promise<Written<AppendResult>> {
    const data = this.store.sessionData(this.sessionId, true)!;
    const existing = data.rows.get(message.id);
    if (existing) return { result: { inserted: false }, json: this.storedJson(existing) };
    const expectedLeafId = options?.expectedLeafId;
    if (expectedLeafId !== undefined && (data.leaf?.id ?? null) !== expectedLeafId) {
      throw leafConflict(this.sessionId, data.leaf?.id ?? null, expectedLeafId);
    }
    this.insert(data, message, json, this.parentRow(data, parentId), new Date().toISOString());
    return { result: { inserted: true }, json };
  }

  protected async writeUpsert(
    write: PreparedWrite,
    parentId: string | null | undefined,
    keep: KeepReserved,
  ): Promise<Written<UpsertResult>> {
    const data = this.store.sessionData(this.sessionId, true)!;
    const row = data.rows.get(write.message.id);
    if (row) {
      const { message, json } = keep ? keep(write, toMessage(this.store, row)) : write;
      return { result: { inserted: false, ...this.replace(row, message, json) }, json };
    }
    this.insert(data, write.message, write.json, this.parentRow(data, parentId), new Date().toISOString());
    return { result: { inserted: true, updated: false }, json: write.json };
  }

  protected async writeImport(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    createdAt: string,
  ): Promise<Written<AppendResult>> {
    const data = this.store.sessionData(this.sessionId, true)!;
    const existing = data.rows.get(message.id);
    if (existing) return { result: { inserted: false }, json: this.storedJson(existing) };
    this.insert(data, message, json, this.parentRow(data, parentId), createdAt);
    return { result: { inserted: true }, json };
  }

  protected async writeUpdate({ message, json }: PreparedWrite): Promise<Written<UpdateResult>> {
    const row = this.data?.rows.get(message.id);
    if (!row)
      throw new SessionError("NOT_FOUND", `Message "${message.id}" is not in session "${this.sessionId}"`);
    return { result: this.replace(row, message, json), json };
  }

  /** @internal the JSON a read of the row returns: its payloads restored. */
  storedJson(row: Row): string {
    return row.hashes.length === 0 ? row.json : JSON.stringify(toMessage(this.store, row));
  }

  /** @internal the row an append goes under (`PARENT_NOT_FOUND` for an id not stored). */
  parentRow(data: SessionData, parentId: string | null | undefined): Row | null {
    if (parentId === undefined) return data.leaf;
    if (parentId === null) return null;
    const parent = data.rows.get(parentId);
    if (!parent) throw parentNotFound(parentId, this.sessionId);
    return parent;
  }

  /** @internal stores a new row under `parent`, which becomes the latest leaf. */
  insert(
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
      tokens: estimateMessageTokens([message]),
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
    row.terms = undefined;
    row.bytes = utf8Length(stored.content);
    row.tokens = estimateMessageTokens([message]);
    return { updated: true };
  }

  protected async writeDelete(messageIds: string[]): Promise<Logged> {
    const data = this.data;
    if (!data) return {};
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
    if (deleted.size === 0) return {};
    data.compactions = data.compactions.filter(
      (c) => !deleted.has(c.fromMessageId) && !deleted.has(c.toMessageId),
    );
    if (data.leaf === null) data.leaf = newestChildless(data);
    return {};
  }

  protected async writeClear(): Promise<Logged> {
    this.store.dropSession(this.sessionId);
    return {};
  }

  protected async writeCompaction(compaction: StoredCompaction): Promise<Written<StoredCompaction>> {
    this.store.sessionData(this.sessionId, true)!.compactions.push(compaction);
    return { result: structuredClone(compaction) };
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
