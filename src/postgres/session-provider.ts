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
import { toolNamesArg } from "../message/tool-parts.js";
import type { PostgresBackend } from "../sql/backend/postgres.js";
import type { Executor } from "../sql/engines/postgres/client.js";
import { runProgram } from "../sql/engines/postgres/program.js";
import { statement, type Tables } from "../sql/engines/postgres/tables.js";
import { hydrate, joined, releaseMessages, releaseSession } from "../sql/media/postgres.js";
import {
  latestSql,
  messageSql,
  readBranches,
  readMessage,
  readSiblings,
  storedJson,
  storedMessage,
} from "../sql/message-reads/postgres.js";
import { openContents, type StoredForm, writeWithAttachments } from "../sql/sealing/postgres-stored-form.js";
import { postgresToolRows } from "../sql/tool-rows/postgres.js";
import { toolMessages } from "../sql/tool-rows/steps.js";
import { type Change, replaced } from "../store/feed/change-rows.js";
import { batchBounds, walkHistory } from "../store/history-stream.js";
import { byteBudget } from "../store/limits.js";
import { type KeepReserved, StoreProvider } from "../store/provider.js";
import { recentHistory } from "../store/recent.js";
import type { PreparedWrite } from "../store/write-policy.js";
import type { Logged, RowWritten, Written } from "../store/written.js";
import { appendRow } from "./append.js";
import { lockSql } from "./append-attempt.js";
import { appendLog, logInTransaction } from "./feed/logged-write.js";
import { leafDepth, pathStats, readPath } from "./history.js";
import { PostgresPathBackend } from "./history-stream.js";
import { updateRow } from "./rewrite.js";
import { contextTokens } from "./tokens.js";
import { upsertRow } from "./upsert.js";
import { clearRows, deleteRows, insertCompaction, listCompactions } from "./writes.js";

// The session's head, locked first: every write locks it before any payload (see attachments.ts).
const headSql = statement((t) => `SELECT num FROM ${t.heads} WHERE session_id = $1 FOR UPDATE`);
// A leaf id no row can have: the read answers empty without asking the database (see canBeStored).
const noSuchLeaf = (leafId: unknown): boolean =>
  leafId !== undefined && leafId !== null && !canBeStored(leafId);

/**
 * The storage contract of one session of a PostgresStore (`store.session(id)`). The reference's constructor over a
 * client, `new PostgresSessionProvider(client, sessionId)`, is the subclass in reference.ts.
 */
export class PostgresStoreProvider extends StoreProvider implements SessionProvider {
  constructor(
    protected readonly backend: PostgresBackend,
    sessionId: string,
    binding?: SessionBinding,
  ) {
    assertSessionId(sessionId);
    super(backend, sessionId, binding);
  }

  /** Records a write's change in its transaction (`joined` to it): both commit together. */
  private logIn<T, W extends Written<T>>(
    joined: Executor,
    change: (r: T) => Change | null,
    written: W,
  ): Promise<W> {
    return logInTransaction(this.backend.changeLog, joined, this.sessionId, change, written);
  }

  private async db(): Promise<[Executor, Tables]> {
    return [await this.backend.ready(), this.backend.tables];
  }

  private async one(
    sql: (t: Tables) => string,
    params: unknown[],
    id?: string,
  ): Promise<SessionMessage | null> {
    const [executor, t] = await this.db();
    return readMessage(executor, t, sql, params, this.sessionId, id);
  }

  async getMessage(id: string): Promise<SessionMessage | null> {
    if (!canBeStored(id)) return null;
    return this.one(messageSql, [this.sessionId, id], id);
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    if (noSuchLeaf(leafId)) return [];
    const [executor, t] = await this.db();
    return hydrate(executor, t, (await readPath(executor, t, this.sessionId, leafId))?.messages ?? []);
  }

  async getLatestLeaf(): Promise<SessionMessage | null> {
    return this.one(latestSql, [this.sessionId]);
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    if (!canBeStored(messageId)) return [];
    const [executor, t] = await this.db();
    return readBranches(executor, t, this.sessionId, messageId);
  }

  protected async readSiblings(messageId: string, limit: number): Promise<SessionMessage[] | null> {
    if (!canBeStored(messageId)) return null;
    const [executor, t] = await this.db();
    return readSiblings(executor, t, this.sessionId, messageId, limit);
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    if (noSuchLeaf(leafId)) return 0;
    const [executor, t] = await this.db();
    const depth = await leafDepth(executor, t, this.sessionId, leafId);
    return depth === null ? 0 : depth + 1;
  }

  async getContextTokens(leafId?: string | null): Promise<number> {
    if (noSuchLeaf(leafId)) return 0;
    const [executor, t] = await this.db();
    return contextTokens(executor, t, this.sessionId, leafId);
  }

  async getRecentHistory(
    leafId: string | null | undefined,
    maxContentBytes: number,
    minRecentMessages?: number,
  ): Promise<RecentHistoryResult> {
    byteBudget(maxContentBytes, minRecentMessages);
    const [executor, t] = await this.db();
    const paths = new PostgresPathBackend(executor, t, this.sessionId);
    return recentHistory(paths, leafId, maxContentBytes, minRecentMessages, () => paths.compactions());
  }

  /** The path in bounded batches, read window by window (src/store/history-stream.ts). */
  async *historyBatches(options?: HistoryReadOptions): AsyncGenerator<SessionMessage[]> {
    batchBounds(options ?? {});
    const [executor, t] = await this.db();
    yield* walkHistory(new PostgresPathBackend(executor, t, this.sessionId), options);
  }

  async getHistoryRowStats(leafId?: string | null): Promise<HistoryRowStat[]> {
    if (noSuchLeaf(leafId)) return [];
    const [executor, t] = await this.db();
    return pathStats(executor, t, this.sessionId, leafId);
  }

  async getToolMessages(toolNames: readonly string[], leafId?: string | null): Promise<SessionMessage[]> {
    const names = toolNamesArg(toolNames);
    if (noSuchLeaf(leafId)) return [];
    const [executor, t] = await this.db();
    return runProgram(
      executor.query,
      toolMessages(
        postgresToolRows(t, this.sessionId, leafId ?? null, {
          open: (contents) => openContents(executor.query, t, this.sessionId, contents),
          hydrate: (messages) => hydrate(executor, t, messages),
        }),
        names,
      ),
    );
  }

  protected async writeAppend(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    options: AppendOptions | undefined,
  ): Promise<Written<AppendResult>> {
    const [executor, t] = await this.db();
    const log = await appendLog(this.backend.changeLog, "append");
    const request = { parentId, expectedLeafId: options?.expectedLeafId, log };
    const written = await this.withPayloads(executor, t, { message, json }, false, (form, tx) =>
      appendRow(tx, t, this.sessionId, message, { ...request, form }),
    );
    return this.withAnswerJson(written, message.id, json);
  }

  protected async writeUpsert(
    write: PreparedWrite,
    parentId: string | null | undefined,
    keep: KeepReserved,
  ): Promise<Written<UpsertResult>> {
    const [executor, t] = await this.db();
    if (!keep) return this.upsert(executor, t, write, parentId);
    // A client's replacement keeps the stored reserved keys: read under the session's lock (created when missing,
    // so no writer can store the id in between), in the transaction that writes.
    return executor.transaction(async (query) => {
      await query(lockSql(t), [this.sessionId, new Date().toISOString()]);
      const tx = joined(executor, query);
      const stored = await storedMessage(tx, t, this.sessionId, write.message.id);
      return this.upsert(tx, t, keep(write, stored), parentId);
    });
  }

  private async upsert(
    executor: Executor,
    t: Tables,
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
  ): Promise<Written<UpsertResult>> {
    const written = await this.withPayloads(executor, t, { message, json }, true, async (form, tx) =>
      this.logIn(
        tx,
        replaced(message.id, parentId),
        await upsertRow(tx, t, this.sessionId, message, parentId, form),
      ),
    );
    return { ...written, json };
  }

  protected async writeImport(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    createdAt: string,
  ): Promise<Written<AppendResult>> {
    const [executor, t] = await this.db();
    const log = await appendLog(this.backend.changeLog, "import");
    const written = await this.withPayloads(executor, t, { message, json }, false, (form, tx) =>
      appendRow(tx, t, this.sessionId, message, { parentId, form, createdAt, log }),
    );
    return this.withAnswerJson(written, message.id, json);
  }

  protected async writeUpdate({ message, json }: PreparedWrite): Promise<Written<UpdateResult>> {
    const [executor, t] = await this.db();
    const written = await this.withPayloads(executor, t, { message, json }, true, async (form, tx) =>
      this.logIn(tx, replaced(message.id), await updateRow(tx, t, this.sessionId, message, form)),
    );
    return { ...written, json };
  }

  // The row write `row` with the message's payloads stored and linked in its transaction (stored-form.ts, sql/media/postgres.ts).
  private withPayloads<T extends object>(
    executor: Executor,
    t: Tables,
    { message, json }: PreparedWrite,
    replaces: boolean,
    row: (form: StoredForm, executor: Executor) => Promise<RowWritten<T, string>>,
  ): Promise<Written<T>> {
    return writeWithAttachments(executor, t, this.sessionId, message, json, replaces, row);
  }

  // An id that was already stored answers with the stored message, payloads restored (one read, only then).
  private async withAnswerJson(
    written: Written<AppendResult>,
    id: string,
    json: string,
  ): Promise<Written<AppendResult>> {
    if (written.result.inserted) return { ...written, json };
    const [executor, t] = await this.db();
    return { ...written, json: (await storedJson(executor, t, this.sessionId, id)) ?? json };
  }

  protected async writeDelete(messageIds: string[], tip: DeleteTip): Promise<Logged> {
    const [executor, t] = await this.db();
    return executor.transaction(async (query) => {
      // No head now: nothing to delete. Going on would let deleteRows' own head read see a session an append
      // committed meanwhile and delete its rows without releasing their payloads.
      const [head] = await query<{ num: string }>(headSql(t), [this.sessionId]);
      if (!head) return {};
      await releaseMessages(query, t, { num: head.num, id: this.sessionId }, messageIds);
      await deleteRows(joined(executor, query), t, this.sessionId, messageIds, tip);
      return this.logIn(joined(executor, query), () => ({ type: "delete", ids: messageIds }), {
        result: null,
      });
    });
  }

  protected async writeClear(): Promise<Logged> {
    const [executor, t] = await this.db();
    return executor.transaction(async (query) => {
      const [head] = await query<{ num: string }>(headSql(t), [this.sessionId]);
      if (!head) return {}; // as in writeDelete: the release and the clear must see the same session
      await releaseSession(query, t, { num: head.num, id: this.sessionId });
      await clearRows(joined(executor, query), t, this.sessionId);
      return this.logIn(joined(executor, query), () => ({ type: "clear", ids: [] }), { result: null });
    });
  }

  protected async writeCompaction(compaction: StoredCompaction): Promise<Written<StoredCompaction>> {
    const [executor, t] = await this.db();
    return executor.transaction(async (query) => {
      const sealed = await insertCompaction(joined(executor, query), t, this.sessionId, compaction);
      // The log keeps the summary as the table does: sealed for an encrypted owner (opened for subscribers).
      const logged =
        sealed === null ? { compaction } : { compaction: { ...compaction, summary: sealed }, sealed: true };
      return this.logIn(joined(executor, query), () => ({ type: "compaction", ids: [], ...logged }), {
        result: compaction,
      });
    });
  }

  async getCompactions(): Promise<StoredCompaction[]> {
    const [executor, t] = await this.db();
    return listCompactions(executor, t, this.sessionId);
  }

  async searchMessages(query: string, limit?: number, options?: SearchOptions): Promise<SearchHit[]> {
    return this.backend.searchMessages(query, {
      ...options,
      ...(limit === undefined ? {} : { limit }),
      sessionId: this.sessionId,
    });
  }
}
