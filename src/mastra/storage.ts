/**
 * Mastra's memory domain (`MemoryStorage` of `@mastra/core/storage`) over an agent-session store (docs/MASTRA.md):
 * a resource is an owner, a thread a session of that owner, a message a session message; the thread's and the
 * resource's own fields (title, metadata, working memory) are the owner's items. So search, facts, `eraseOwner`,
 * purge, encryption at rest and the Citus layout reach every byte Mastra stores.
 */
import { randomUUID } from "node:crypto";
import type { MastraDBMessage, StorageThreadType } from "@mastra/core/memory";
import {
  MemoryStorage,
  type StorageCloneThreadInput,
  type StorageCopyThreadOutput,
  type StorageListMessagesByResourceIdInput,
  type StorageListMessagesInput,
  type StorageListMessagesOutput,
  type StorageListThreadsInput,
  type StorageListThreadsOutput,
  type StorageResourceType,
} from "@mastra/core/storage";
import type { SessionProvider } from "../contract/provider.js";
import type { SessionRegistry } from "../contract/registry.js";
import type { StepCapableStore } from "../contract/step.js";
import { SessionError } from "../errors.js";
import type { SqlGraphItems } from "../sql/graph-store/steps.js";
import type { TimedMessages } from "../sql/timed-messages/reads.js";
import { userError } from "./errors.js";
import { listMessages } from "./list.js";
import { MastraMessages, type MessagePatch } from "./message-store.js";
import { MastraRecords } from "./records.js";
import { listThreads } from "./thread-list.js";
import { MASTRA_SOURCE, MastraThreads } from "./threads.js";

/** A store Mastra's memory can live in: a `SqliteStore` or a `PostgresStore` (PGlite and Citus included). */
export interface MastraCapableStore extends StepCapableStore {
  readonly registry: SessionRegistry;
  readonly graphItems: SqlGraphItems;
  readonly timedMessages: TimedMessages;
  session(sessionId: string): SessionProvider;
}

// Messages copied per read of a cloned thread.
const COPY_PAGE = 200;

/** Mastra's `MemoryStorage` over an agent-session store. */
export class AgentSessionMemoryStorage extends MemoryStorage {
  override readonly supportsPartialThreadUpdate = true;
  private readonly threads: MastraThreads;
  private readonly messages: MastraMessages;

  constructor(private readonly store: MastraCapableStore) {
    super();
    if (typeof (store as Partial<MastraCapableStore>)?.timedMessages?.page !== "function") {
      throw new SessionError(
        "UNSUPPORTED",
        "AgentSessionMemoryStorage needs a SqliteStore or a PostgresStore",
      );
    }
    this.threads = new MastraThreads(store.registry, new MastraRecords(store.graphItems));
    this.messages = new MastraMessages((id) => store.session(id), store.timedMessages, this.threads, store);
  }

  async getThreadById({ threadId, resourceId }: { threadId: string; resourceId?: string }) {
    return this.threads.get(threadId, resourceId);
  }

  async saveThread({ thread }: { thread: StorageThreadType }) {
    return this.threads.save(thread);
  }

  async updateThread({
    id,
    title,
    metadata,
  }: {
    id: string;
    title?: string;
    metadata?: Record<string, unknown>;
  }) {
    const thread = await this.threads.update(id, title, metadata);
    if (!thread) throw userError("UPDATE_THREAD_NOT_FOUND", `Thread ${id} not found`, { threadId: id });
    return thread;
  }

  async deleteThread({ threadId }: { threadId: string }) {
    await this.threads.delete(threadId);
  }

  async listThreads(args: StorageListThreadsInput): Promise<StorageListThreadsOutput> {
    this.validateMetadataKeys(args.filter?.metadata);
    this.validatePaginationInput(args.page ?? 0, args.perPage ?? 100);
    return listThreads(this.threads, args, this.parseOrderBy(args.orderBy, "DESC"));
  }

  async listMessages(args: StorageListMessagesInput): Promise<StorageListMessagesOutput> {
    const ids = Array.isArray(args.threadId) ? args.threadId : [args.threadId];
    if (ids.length === 0 || ids.some((id) => typeof id !== "string" || id.trim() === "")) {
      throw userError(
        "LIST_MESSAGES_INVALID_THREAD_ID",
        "threadId must be a non-empty string or array of non-empty strings",
      );
    }
    return listMessages(this.store.timedMessages, this.messages, args, ids);
  }

  override async listMessagesByResourceId(
    args: StorageListMessagesByResourceIdInput,
  ): Promise<StorageListMessagesOutput> {
    if (typeof args.resourceId !== "string" || args.resourceId.trim() === "")
      throw userError("LIST_MESSAGES_BY_RESOURCE_ID_INVALID_QUERY", "resourceId is required");
    const ids: string[] = [];
    for await (const [id] of this.threads.records.threads(args.resourceId)) ids.push(id);
    return listMessages(this.store.timedMessages, this.messages, { ...args, threadId: ids }, ids);
  }

  async listMessagesById({ messageIds }: { messageIds: string[] }) {
    const { located, owners } = await this.messages.locate(messageIds);
    const found = await this.messages.read(located, owners);
    // Oldest first, as Mastra's stores answer (their MessageList orders what their statement read).
    found.sort((a, b) => new Date(a.createdAt).getTime() - new Date(b.createdAt).getTime());
    return { messages: found };
  }

  async saveMessages({ messages }: { messages: MastraDBMessage[] }) {
    return { messages: await this.messages.save(messages) };
  }

  async updateMessages({ messages }: { messages: MessagePatch[] }) {
    return this.messages.update(messages);
  }

  override async deleteMessages(messageIds: string[]) {
    await this.messages.delete(messageIds);
  }

  override async getResourceById({
    resourceId,
  }: {
    resourceId: string;
  }): Promise<StorageResourceType | null> {
    const record = await this.threads.records.resource(resourceId);
    if (!record) return null;
    return {
      id: resourceId,
      ...(record.workingMemory !== undefined ? { workingMemory: record.workingMemory } : {}),
      ...(record.metadata !== undefined ? { metadata: record.metadata } : {}),
      createdAt: new Date(record.createdAt),
      updatedAt: new Date(record.updatedAt),
    };
  }

  override async saveResource({ resource }: { resource: StorageResourceType }) {
    await this.threads.records.putResource(resource.id, {
      workingMemory: resource.workingMemory,
      metadata: resource.metadata,
      createdAt: new Date(resource.createdAt ?? Date.now()).toISOString(),
      updatedAt: new Date(resource.updatedAt ?? Date.now()).toISOString(),
    });
    return resource;
  }

  override async updateResource({
    resourceId,
    workingMemory,
    metadata,
  }: {
    resourceId: string;
    workingMemory?: string;
    metadata?: Record<string, unknown>;
  }): Promise<StorageResourceType> {
    const old = await this.threads.records.resource(resourceId);
    const now = new Date().toISOString();
    await this.threads.records.putResource(resourceId, {
      workingMemory: workingMemory ?? old?.workingMemory,
      metadata: metadata === undefined ? old?.metadata : { ...old?.metadata, ...metadata },
      createdAt: old?.createdAt ?? now,
      updatedAt: now,
    });
    return (await this.getResourceById({ resourceId })) as StorageResourceType;
  }

  override async updateThreadResourceId(): Promise<StorageThreadType> {
    throw new SessionError("UNSUPPORTED", "A thread's resource is its owner, which never changes");
  }

  override async copyThread(args: StorageCloneThreadInput): Promise<StorageCopyThreadOutput> {
    const source = await this.threads.get(args.sourceThreadId);
    if (!source)
      throw userError(
        "CLONE_THREAD_SOURCE_NOT_FOUND",
        `Source thread with id ${args.sourceThreadId} not found`,
      );
    const newThreadId = args.newThreadId || randomUUID();
    if (await this.store.registry.get(newThreadId))
      throw userError("CLONE_THREAD_THREAD_EXISTS", `Thread with id ${newThreadId} already exists`);
    const filter = args.options?.messageFilter;
    const wanted = filter?.messageIds?.length ? new Set(filter.messageIds) : undefined;
    const range: NonNullable<StorageListMessagesInput["filter"]> = { dateRange: {} };
    if (filter?.startDate) range.dateRange = { ...range.dateRange, start: filter.startDate };
    if (filter?.endDate) range.dateRange = { ...range.dateRange, end: filter.endDate };
    const limit =
      args.options?.messageLimit && args.options.messageLimit > 0 ? args.options.messageLimit : undefined;
    const copied: MastraDBMessage[] = [];
    // The source's messages oldest first (the last `messageLimit` of them), a page at a time.
    for (let page = 0; ; page++) {
      const read = await this.listMessages({ threadId: source.id, filter: range, page, perPage: COPY_PAGE });
      for (const m of read.messages) if (!wanted || wanted.has(m.id)) copied.push(m);
      if (!read.hasMore) break;
      if (limit !== undefined && copied.length > limit) copied.splice(0, copied.length - limit);
    }
    if (limit !== undefined && copied.length > limit) copied.splice(0, copied.length - limit);
    const now = new Date();
    const resourceId = args.resourceId || source.resourceId;
    const lastMessageId = copied.at(-1)?.id;
    const thread: StorageThreadType = {
      id: newThreadId,
      resourceId,
      title: args.title || (source.title ? `Clone of ${source.title}` : ""),
      metadata: {
        ...args.metadata,
        clone: { sourceThreadId: source.id, clonedAt: now, ...(lastMessageId ? { lastMessageId } : {}) },
      },
      createdAt: now,
      updatedAt: now,
    };
    await this.threads.save(thread);
    const messageIdMap: Record<string, string> = {};
    const clones = copied.map((m) => {
      const id = randomUUID();
      messageIdMap[m.id] = id;
      return { ...m, id, threadId: newThreadId, resourceId };
    });
    await this.messages.save(clones);
    return { thread, messageIdMap };
  }

  async dangerouslyClearAll(): Promise<void> {
    const ids: string[] = [];
    for await (const info of this.store.registry.scan({ source: MASTRA_SOURCE })) ids.push(info.id);
    for (const id of ids) await this.threads.delete(id);
  }
}
