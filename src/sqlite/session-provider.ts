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
import { assertSessionId, canBeStored } from "../message/ids.js";
import { parseMessage } from "../message/json.js";
import { toolNamesArg } from "../message/tool-parts.js";
import type { SqliteBackend } from "../sql/backend/sqlite.js";
import { contentSql, resolveContent } from "../sql/engines/sqlite/chunks.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { runProgram } from "../sql/engines/sqlite/program.js";
import { hydrate, releaseMessages } from "../sql/media/sqlite.js";
import {
  type Located,
  locate,
  readMessage,
  readSiblings,
  storedJson,
  storedMessage,
} from "../sql/message-reads/sqlite.js";
import { sqliteToolRows } from "../sql/tool-rows/sqlite.js";
import { toolMessages } from "../sql/tool-rows/steps.js";
import { type Change, inserted, replaced } from "../store/feed/change-rows.js";
import { walkHistory } from "../store/history-stream.js";
import { type KeepReserved, StoreProvider } from "../store/provider.js";
import { recentHistory } from "../store/recent.js";
import type { PreparedWrite } from "../store/write-policy.js";
import type { Logged, Written } from "../store/written.js";
import { type AppendRequest, appendRow } from "./append.js";
import { listCompactions, pathStats, readPath } from "./history.js";
import { SqlitePathBackend } from "./history-stream.js";
import { contextTokens } from "./tokens.js";
import { writeMessageRow } from "./write-row.js";
import { clearRows, deleteRows, insertCompaction, updateRow, upsertRow } from "./writes.js";

interface Head {
  num: number;
  leaf_seq: number | null;
}

/** The storage contract of one session in a SQLite database. */
export class SqliteStoreProvider extends StoreProvider implements SessionProvider {
  constructor(
    protected readonly store: SqliteBackend,
    sessionId: string,
    binding?: SessionBinding,
  ) {
    assertSessionId(sessionId);
    super(store, sessionId, binding);
  }

  private get driver(): SqlDriver {
    return this.store.driver;
  }

  private head(): Head | undefined {
    return this.driver.get<Head>("SELECT num, leaf_seq FROM agent_session_heads WHERE session_id = ?", [
      this.sessionId,
    ]);
  }

  private locate(leafId: string | null | undefined): Located | undefined {
    return locate(this.driver, this.sessionId, leafId);
  }

  async getMessage(id: string): Promise<SessionMessage | null> {
    const head = this.head();
    if (!head || !canBeStored(id)) return null;
    return readMessage(
      this.driver,
      `SELECT ${contentSql()} AS content FROM agent_messages WHERE session_num = ? AND id = ?`,
      [head.num, id],
      this.sessionId,
      id,
    );
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    const at = this.locate(leafId);
    return at?.leaf
      ? hydrate(this.driver, readPath(this.driver, this.sessionId, at.num, at.leaf, 0, at.overlays))
      : [];
  }

  async getLatestLeaf(): Promise<SessionMessage | null> {
    const head = this.head();
    if (!head || head.leaf_seq === null) return null;
    return readMessage(
      this.driver,
      `SELECT ${contentSql()} AS content FROM agent_messages WHERE seq = ?`,
      [head.leaf_seq],
      this.sessionId,
    );
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    const head = this.head();
    if (!head || !canBeStored(messageId)) return [];
    const rows = this.driver.all<{ content: unknown }>(
      `SELECT ${contentSql("c")} AS content FROM agent_messages p JOIN agent_messages c ON c.parent_seq = p.seq
       WHERE p.session_num = ? AND p.id = ? ORDER BY c.seq`,
      [head.num, messageId],
    );
    const messages = rows
      .map((r) => parseMessage(resolveContent(this.driver, r.content, this.sessionId)))
      .filter((m): m is SessionMessage => m !== null);
    return hydrate(this.driver, messages);
  }

  protected async readSiblings(messageId: string, limit: number): Promise<SessionMessage[] | null> {
    return readSiblings(this.driver, this.sessionId, messageId, limit);
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    const leaf = this.locate(leafId)?.leaf;
    return leaf ? leaf.depth + 1 : 0;
  }

  async getRecentHistory(
    leafId: string | null | undefined,
    maxContentBytes: number,
    minRecentMessages?: number,
  ): Promise<RecentHistoryResult> {
    const paths = this.paths();
    return recentHistory(paths, leafId, maxContentBytes, minRecentMessages, () => paths.compactions());
  }

  /** The path in bounded batches, read window by window (src/store/history-stream.ts). */
  historyBatches(options?: HistoryReadOptions): AsyncIterable<SessionMessage[]> {
    return walkHistory(this.paths(), options);
  }

  private paths(): SqlitePathBackend {
    return new SqlitePathBackend(this.driver, this.sessionId, canBeStored);
  }

  async getHistoryRowStats(leafId?: string | null): Promise<HistoryRowStat[]> {
    const leaf = this.locate(leafId)?.leaf;
    return leaf ? pathStats(this.driver, leaf) : [];
  }

  async getToolMessages(toolNames: readonly string[], leafId?: string | null): Promise<SessionMessage[]> {
    const names = toolNamesArg(toolNames);
    const leaf = this.locate(leafId)?.leaf;
    return leaf
      ? runProgram(
          this.driver,
          toolMessages(
            sqliteToolRows(this.driver, this.sessionId, leaf.seq, (messages) =>
              hydrate(this.driver, messages),
            ),
            names,
          ),
        )
      : [];
  }

  async getContextTokens(leafId?: string | null): Promise<number> {
    const at = this.locate(leafId);
    if (!at?.leaf) return 0;
    return at.overlays ? contextTokens(this.driver, this.sessionId, at.num, at.leaf) : at.leaf.cum_tokens;
  }

  protected async writeAppend(
    write: PreparedWrite,
    parentId: string | null | undefined,
    options: AppendOptions | undefined,
  ): Promise<Written<AppendResult>> {
    return this.writeNewRow("append", write, { parentId, expectedLeafId: options?.expectedLeafId });
  }

  protected async writeUpsert(
    write: PreparedWrite,
    parentId: string | null | undefined,
    keep: KeepReserved,
  ): Promise<Written<UpsertResult>> {
    const upsert = (): Written<UpsertResult> => {
      // A client's replacement keeps the stored reserved keys: read in this write's transaction.
      const { message, json } = keep
        ? keep(write, storedMessage(this.driver, this.sessionId, write.message.id))
        : write;
      const written = writeMessageRow(
        this.driver,
        this.store.changeLog,
        this.sessionId,
        { message, json, replaces: true },
        replaced(message.id, parentId),
        (content, key) => upsertRow(this.driver, this.sessionId, message, parentId, content, key),
      );
      return { ...written, json };
    };
    return keep ? this.driver.transaction(upsert) : upsert();
  }

  protected async writeImport(
    write: PreparedWrite,
    parentId: string | null | undefined,
    createdAt: string,
  ): Promise<Written<AppendResult>> {
    return this.writeNewRow("import", write, { parentId, createdAt });
  }

  /** A new row (an append or an import) with its links and log row; an id stored already answers its stored form. */
  private writeNewRow(
    kind: "append" | "import",
    { message, json }: PreparedWrite,
    request: Omit<AppendRequest, "json">,
  ): Written<AppendResult> {
    const written = writeMessageRow(
      this.driver,
      this.store.changeLog,
      this.sessionId,
      { message, json, replaces: false },
      inserted(kind, message.id, request.parentId),
      (content, key, guard, clear) =>
        appendRow(this.driver, this.sessionId, message, { ...request, json: content, key, guard, clear }),
      true,
    );
    const stored = written.result.inserted
      ? json
      : (storedJson(this.driver, this.sessionId, message.id) ?? json);
    return { ...written, json: stored };
  }

  protected async writeUpdate({ message, json }: PreparedWrite): Promise<Written<UpdateResult>> {
    const written = writeMessageRow(
      this.driver,
      this.store.changeLog,
      this.sessionId,
      { message, json, replaces: true },
      replaced(message.id),
      (content, key) => updateRow(this.driver, this.sessionId, message, content, key),
    );
    return { ...written, json };
  }

  protected async writeDelete(messageIds: string[], tip: DeleteTip): Promise<Logged> {
    return this.driver.transaction(() => {
      const head = this.head();
      if (head) releaseMessages(this.driver, head.num, messageIds);
      deleteRows(this.driver, this.sessionId, messageIds, tip);
      return this.logged({ type: "delete", ids: messageIds });
    });
  }

  protected async writeClear(): Promise<Logged> {
    return this.driver.transaction(() => {
      const head = this.head();
      if (head) clearRows(this.driver, head.num, this.sessionId);
      return this.logged({ type: "clear", ids: [] });
    });
  }

  protected async writeCompaction(compaction: StoredCompaction): Promise<Written<StoredCompaction>> {
    return this.driver.transaction(() => {
      const num = this.store.sessionNum(this.sessionId, true)!;
      const sealed = insertCompaction(this.driver, this.sessionId, num, compaction);
      // The log keeps the summary as the table does: sealed for an encrypted owner (opened for subscribers).
      const logged =
        sealed === null ? { compaction } : { compaction: { ...compaction, summary: sealed }, sealed: true };
      return { result: compaction, ...this.logged({ type: "compaction", ids: [], ...logged }) };
    });
  }

  /** Records `change` in the caller's transaction, so the write and its log row commit together (see FEED.md). */
  private logged(change: Change): Logged {
    const log = this.store.changeLog;
    return log ? { logged: log.record({ ...change, sessionId: this.sessionId }) } : {};
  }

  async getCompactions(): Promise<StoredCompaction[]> {
    const head = this.head();
    return head ? listCompactions(this.driver, this.sessionId, head.num) : [];
  }

  async searchMessages(query: string, limit?: number, options?: SearchOptions): Promise<SearchHit[]> {
    return this.store.searchMessages(query, {
      ...options,
      ...(limit === undefined ? {} : { limit }),
      sessionId: this.sessionId,
    });
  }
}
