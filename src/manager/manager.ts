import { randomUUID } from "node:crypto";
import { type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import type { SessionToolSet } from "../context/tools.js";
import { SessionError } from "../errors.js";
import { assertId, assertMessageShape, isEchoedOverlay } from "../message.js";
import type { SqliteOptions } from "../sqlite/open.js";
import type { NewSessionRecord, SessionInfo } from "../store/types.js";
import type {
  CompactionDetails,
  SearchBranch,
  SearchResult,
  SessionMessage,
  StoredCompaction,
} from "../types.js";
import { type ManagerSource, SessionManagerBase } from "./base.js";
import { copyBlocks, copyMessages, sessionBlockKeys } from "./copy.js";
import {
  assertName,
  type CacheUsage,
  type CreateSessionOptions,
  listOptions,
  newRecord,
  usageDelta,
} from "./input.js";
import { sessionSearchTool } from "./search-tools.js";

/** Options of `SessionManager.search`. */
export interface ManagerSearchOptions {
  /** Most hits returned (default 20, at most 1,000). */
  limit?: number | undefined;
  /** Only this session's messages. */
  sessionId?: string | undefined;
  /** `"active"`: only messages on each session's active path; `"all"` (default): every branch. */
  branch?: SearchBranch | undefined;
}

/** The text of the message `compactAndSplit` starts a continuation with, as in the reference. */
export function continuationText(summary: string): string {
  return `[Context from previous session]\n\n${summary}`;
}

/**
 * Many named conversations in one store: their lifecycle, messages, forks, usage and cross-session search, on
 * every backend with a session registry. Every method naming a session fails with `NOT_FOUND` for an unregistered
 * id, except `get` (null), `getSession` (synchronous) and `delete` (idempotent).
 */
export class SessionManager extends SessionManagerBase {
  /** Creates a manager on a store, a SQLite path, a database handle or a `sql`-tag object (an Agent). */
  static create(source: ManagerSource, options: SqliteOptions = {}): SessionManager {
    return new SessionManager(source, options);
  }

  /** Registers a session (UUID id unless `options.id` is given) with zero usage. */
  async create(name: string, options?: CreateSessionOptions): Promise<SessionInfo> {
    return this.store.registry.create(newRecord(name, options, randomUUID));
  }

  /** The registered row, or null. */
  async get(sessionId: string): Promise<SessionInfo | null> {
    assertId(sessionId, "A session id");
    return this.store.registry.get(sessionId);
  }

  /** Sessions, newest activity first (`updated_at` descending, then most recent write); `limit`/`offset` page. */
  async list(options?: { limit?: number; offset?: number }): Promise<SessionInfo[]> {
    return this.store.registry.list(listOptions(options));
  }

  /** Renames a session (bumps its activity time). */
  async rename(sessionId: string, name: string): Promise<SessionInfo> {
    assertId(sessionId, "A session id");
    assertName(name);
    return this.found(sessionId, await this.store.registry.rename(sessionId, name));
  }

  /**
   * Removes everything of a session: messages, overlays, search-index rows, its auto-wired context blocks and
   * cached prompt, and its registry row. True when it was registered; deleting twice is not an error.
   */
  async delete(sessionId: string): Promise<boolean> {
    assertId(sessionId, "A session id");
    const existed = await this.store.registry.delete(sessionId, { blockKeys: this.blockKeys(sessionId) });
    this.forget(sessionId);
    return existed;
  }

  /** Appends a message (after the latest leaf, under `parentId`, or as a new root with `null`); returns its id. */
  async append(sessionId: string, message: SessionMessage, parentId?: string | null): Promise<string> {
    await this.require(sessionId);
    await this.getSession(sessionId).appendMessage(message, parentId);
    return message.id;
  }

  /** Updates the message when its id exists in the session, else appends it; returns its id. */
  async upsert(sessionId: string, message: SessionMessage, parentId?: string | null): Promise<string> {
    await this.require(sessionId);
    await this.getSession(sessionId).upsertMessage(message, parentId);
    return message.id;
  }

  /**
   * Appends messages as a chain, each under the previous one. The first goes under `parentId`, or after the
   * latest leaf when it is omitted (the active branch continues), or becomes a new root with `null`. Returns the
   * last id (`parentId ?? null` for an empty list). Every message is validated before anything is written.
   */
  async appendAll(
    sessionId: string,
    messages: SessionMessage[],
    parentId?: string | null,
  ): Promise<string | null> {
    await this.require(sessionId);
    if (!Array.isArray(messages)) {
      throw new SessionError("INVALID_ARGUMENT", "appendAll expects an array of messages");
    }
    for (const message of messages) assertMessageShape(message);
    const session = this.getSession(sessionId);
    let parent = parentId;
    for (const message of messages) {
      // An echoed overlay is ignored by the append; the chain continues under the message before it.
      if (isEchoedOverlay(message)) continue;
      await session.appendMessage(message, parent);
      parent = message.id;
    }
    return parent ?? null;
  }

  /** The path to `leafId` (default: the latest leaf) with overlays applied. */
  async getHistory(sessionId: string, leafId?: string | null): Promise<SessionMessage[]> {
    await this.require(sessionId);
    return this.getSession(sessionId).getHistory(leafId);
  }

  /** Number of stored messages on the active path. */
  async getMessageCount(sessionId: string): Promise<number> {
    await this.require(sessionId);
    return this.getSession(sessionId).getPathLength();
  }

  /** Removes every message and overlay of the session (the registry row, usage and blocks stay). */
  async clearMessages(sessionId: string): Promise<void> {
    await this.require(sessionId);
    await this.getSession(sessionId).clearMessages();
  }

  /** Deletes messages; their children are spliced onto their parents. */
  async deleteMessages(sessionId: string, messageIds: string[]): Promise<void> {
    await this.require(sessionId);
    await this.getSession(sessionId).deleteMessages(messageIds);
  }

  /** The children of a message, oldest first. */
  async getBranches(sessionId: string, messageId: string): Promise<SessionMessage[]> {
    await this.require(sessionId);
    return this.getSession(sessionId).getBranches(messageId);
  }

  /**
   * A new session holding the history up to `atMessageId` (overlays applied, fresh ids, one linear chain) and
   * copies of the source's auto-wired context blocks; `parent_session_id` is the source, usage starts at zero.
   * `NOT_FOUND` when the message is not in the source; nothing is left behind when copying fails.
   */
  async fork(sessionId: string, atMessageId: string, name: string): Promise<SessionInfo> {
    await this.require(sessionId);
    assertId(atMessageId, "atMessageId");
    assertName(name);
    const source = this.getSession(sessionId);
    if (!(await source.getMessage(atMessageId))) {
      throw new SessionError("NOT_FOUND", `Message "${atMessageId}" is not in session "${sessionId}"`);
    }
    const history = await source.getHistory(atMessageId);
    return this.derive(sessionId, { id: randomUUID(), name, parentSessionId: sessionId }, history);
  }

  /**
   * Ends a session (`end_reason = "compaction"`) and starts a continuation — named `name` or the old name, same
   * model and source, the old session as parent — whose history is one assistant message carrying `summary`.
   * The continuation gets copies of the old session's auto-wired context blocks, so its memory carries over.
   */
  async compactAndSplit(sessionId: string, summary: string, name?: string): Promise<SessionInfo> {
    const old = await this.require(sessionId);
    if (typeof summary !== "string") {
      throw new SessionError("INVALID_ARGUMENT", `A summary must be a string, got ${typeof summary}`);
    }
    if (name !== undefined) assertName(name);
    const message: SessionMessage = {
      id: randomUUID(),
      role: "assistant",
      parts: [{ type: "text", text: continuationText(summary) }],
    };
    const record = { id: randomUUID(), name: name ?? old.name, parentSessionId: sessionId, ...modelOf(old) };
    const info = await this.derive(sessionId, record, [message]);
    this.found(sessionId, await this.store.registry.markEnded(sessionId, "compaction"));
    // Ending the old session bumped it; the continuation is the newest activity.
    await this.store.registry.touch(info.id);
    return this.found(info.id, await this.store.registry.get(info.id));
  }

  /** Registers a session derived from `fromId` with `messages` and its blocks; removes it again on failure. */
  private async derive(
    fromId: string,
    record: NewSessionRecord,
    messages: readonly SessionMessage[],
  ): Promise<SessionInfo> {
    const labels = this.ownedLabels(fromId);
    const info = await this.store.registry.create(record);
    try {
      await copyMessages(this.store, info.id, messages);
      await copyBlocks(this.store, labels, fromId, info.id);
      await this.store.registry.touch(info.id);
    } catch (error) {
      // Best effort: the original failure is what the caller needs to see.
      await this.store.registry
        .delete(info.id, { blockKeys: sessionBlockKeys(labels, info.id) })
        .catch(() => false);
      throw error;
    }
    return this.found(info.id, await this.store.registry.get(info.id));
  }

  /** Stores a compaction overlay replacing `fromId`..`toId` when history is read. */
  async addCompaction(
    sessionId: string,
    summary: string,
    fromId: string,
    toId: string,
    details?: CompactionDetails,
  ): Promise<StoredCompaction> {
    await this.require(sessionId);
    return this.getSession(sessionId).addCompaction(summary, fromId, toId, details);
  }

  /** Every overlay of the session, oldest first. */
  async getCompactions(sessionId: string): Promise<StoredCompaction[]> {
    await this.require(sessionId);
    return this.getSession(sessionId).getCompactions();
  }

  /**
   * Adds to the session's usage counters (token counts whole numbers >= 0, cost >= 0) and returns the row. A
   * forked or continued session starts its own counters at zero.
   */
  async addUsage(
    sessionId: string,
    inputTokens: number,
    outputTokens: number,
    cost: number,
    cache?: CacheUsage,
  ): Promise<SessionInfo> {
    assertId(sessionId, "A session id");
    const usage = usageDelta(inputTokens, outputTokens, cost, cache);
    return this.found(sessionId, await this.store.registry.addUsage(sessionId, usage));
  }

  /**
   * Full-text search across sessions (or one, with `sessionId`), with the query language of `Session.search`;
   * every hit carries `sessionId`, `createdAt` and `onActivePath`. Covers every session the store holds.
   */
  async search(query: string, options: ManagerSearchOptions = {}): Promise<SearchResult[]> {
    if (options.sessionId !== undefined) await this.require(options.sessionId);
    return this.store.searchMessages(query, {
      ...(options.limit === undefined ? {} : { limit: options.limit }),
      ...(options.branch === undefined ? {} : { branch: options.branch }),
      ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    });
  }

  /**
   * The model's cross-session tool: `{ session_search }`, its result within the manager's tool-output limits
   * (`limits` overrides them for this tool set).
   */
  tools(limits?: Partial<ToolOutputLimits>): SessionToolSet {
    return {
      session_search: sessionSearchTool(
        {
          countSessions: () => this.store.registry.count(),
          search: (query, options) => this.search(query, options),
        },
        toolOutputLimits(limits, this.templates.toolOutput),
      ),
    };
  }
}

function modelOf(info: SessionInfo): { model: string | null; source: string | null } {
  return { model: info.model, source: info.source };
}
