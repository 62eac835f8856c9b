import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import type {
  AppendOptions,
  AppendResult,
  DeleteTip,
  HistoryReadOptions,
  HistoryRowStat,
  RecentHistoryResult,
  SessionProvider,
  UpdateResult,
  UpsertResult,
} from "../contract/provider.js";
import type { SearchHit, SearchOptions } from "../contract/search.js";
import type { SessionBinding } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { ownTime } from "../message/created-at.js";
import { parseMessage } from "../message/json.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { carriesTool, mayCarryTool, toolNamesArg, toolNeedles } from "../message/tool-parts.js";
import { walkHistory } from "../store/history-stream.js";
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
import {
  deleteRows,
  insertRow,
  leafConflict,
  parentRow,
  pathTo,
  replaceRow,
  storedJson,
  toMessage,
  toMessages,
} from "./rows.js";

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

  // The reference implementation keeps no list of roots: a root's siblings are found by a scan of the session.
  protected async readSiblings(messageId: string, limit: number): Promise<SessionMessage[] | null> {
    const data = this.data;
    const row = data?.rows.get(messageId);
    if (!data || !row) return null;
    const siblings = row.parent
      ? row.parent.children
      : [...data.rows.values()].filter((r) => r.parent === null).sort((a, b) => a.seq - b.seq);
    return toMessages(this.store, siblings.slice(0, limit));
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
    if (existing) return { result: { inserted: false }, json: storedJson(this.store, existing) };
    const expectedLeafId = options?.expectedLeafId;
    if (expectedLeafId !== undefined && (data.leaf?.id ?? null) !== expectedLeafId) {
      throw leafConflict(this.sessionId, data.leaf?.id ?? null, expectedLeafId);
    }
    this.insert(data, message, json, parentId, ownTime(message) ?? new Date().toISOString());
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
      return { result: { inserted: false, ...replaceRow(this.store, row, message, json) }, json };
    }
    this.insert(
      data,
      write.message,
      write.json,
      parentId,
      ownTime(write.message) ?? new Date().toISOString(),
    );
    return { result: { inserted: true, updated: false }, json: write.json };
  }

  protected async writeImport(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    createdAt: string,
  ): Promise<Written<AppendResult>> {
    const data = this.store.sessionData(this.sessionId, true)!;
    const existing = data.rows.get(message.id);
    if (existing) return { result: { inserted: false }, json: storedJson(this.store, existing) };
    this.insert(data, message, json, parentId, createdAt);
    return { result: { inserted: true }, json };
  }

  // A new row under `parentId` (PARENT_NOT_FOUND for an id not stored), the session's latest leaf.
  private insert(
    data: SessionData,
    message: SessionMessage,
    json: string,
    parentId: string | null | undefined,
    createdAt: string,
  ): void {
    insertRow(this.store, data, message, json, parentRow(data, parentId, this.sessionId), createdAt);
  }

  protected async writeUpdate({ message, json }: PreparedWrite): Promise<Written<UpdateResult>> {
    const row = this.data?.rows.get(message.id);
    if (!row)
      throw new SessionError("NOT_FOUND", `Message "${message.id}" is not in session "${this.sessionId}"`);
    return { result: replaceRow(this.store, row, message, json), json };
  }

  protected async writeDelete(messageIds: string[], tip: DeleteTip): Promise<Logged> {
    const data = this.data;
    if (data) deleteRows(this.store, data, this.sessionId, messageIds, tip);
    return {};
  }

  protected async writeClear(): Promise<Logged> {
    this.store.dropSession(this.sessionId);
    this.store.facts.forgetMessages(this.sessionId, null); // the facts' sources in it; a fact left with none goes
    return {};
  }

  protected async writeCompaction(compaction: StoredCompaction): Promise<Written<StoredCompaction>> {
    this.store.sessionData(this.sessionId, true)!.compactions.push(compaction);
    return { result: structuredClone(compaction) };
  }

  async getCompactions(): Promise<StoredCompaction[]> {
    return structuredClone(this.data?.compactions ?? []);
  }

  async searchMessages(query: string, limit?: number, options?: SearchOptions): Promise<SearchHit[]> {
    return this.store.searchMessages(query, {
      ...options,
      ...(limit === undefined ? {} : { limit }),
      sessionId: this.sessionId,
    });
  }
}
