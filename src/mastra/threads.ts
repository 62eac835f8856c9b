/**
 * A Mastra thread is a session of the store's registry (id = thread id, owner = resource id, source `"mastra"`); its
 * title, metadata and times are the owner's item (records.ts). A thread of another owner reads as none, and a write
 * that would put a thread or a message under another owner is refused (`SessionError` `CONFLICT`), never done.
 */
import type { StorageThreadType } from "@mastra/core/memory";
import type { SessionInfo, SessionRegistry } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { assertSessionId } from "../message/ids.js";
import { parseOwner } from "../store/owner.js";
import type { MastraRecords, ThreadRecord } from "./records.js";

/** The source a Mastra thread's session is registered with. */
export const MASTRA_SOURCE = "mastra";

// Threads whose owner a save remembers (the oldest forgotten first).
const REMEMBERED = 1024;

const iso = (value: unknown): string =>
  (value instanceof Date ? value : new Date(String(value ?? Date.now()))).toISOString();

/** The Mastra thread of a registered session and its record. */
export function threadOf(info: SessionInfo, owner: string, record: ThreadRecord | null): StorageThreadType {
  // The registry's time moves with every message written: the thread's `updatedAt` is the later of the two.
  const updated = [record?.updatedAt, info.updated_at]
    .filter((t): t is string => t !== undefined)
    .sort()
    .at(-1);
  const thread: StorageThreadType = {
    id: info.id,
    resourceId: owner,
    createdAt: new Date(record?.createdAt ?? info.created_at),
    updatedAt: new Date(updated ?? info.updated_at),
    metadata: record?.metadata ?? {},
  };
  const title = record?.title ?? (info.name === "" ? undefined : info.name);
  if (title !== undefined) thread.title = title;
  return thread;
}

/** The threads of a store: registered sessions with their owner's records. */
export class MastraThreads {
  // Thread → the owner this process found it registered to. Only a save reads it (save.ts), and every write of a
  // save checks the owner and source again inside its own transaction (a step's guard), so a thread deleted or
  // registered again elsewhere refuses the write (NOT_FOUND) and the save reads the registry again.
  private readonly known = new Map<string, string>();

  constructor(
    readonly registry: SessionRegistry,
    readonly records: MastraRecords,
  ) {}

  /** The thread's session and owner (null: not registered, or registered without an owner). */
  async owned(threadId: string): Promise<{ info: SessionInfo; owner: string } | null> {
    const info = await this.registry.get(threadId);
    // Only the door's own sessions are threads: a chat's, a LangGraph thread's or eve's session of the same store is
    // never read, moved into, updated or deleted through Mastra's calls, whatever ids the two share.
    return info?.owner === undefined || info.source !== MASTRA_SOURCE ? null : { info, owner: info.owner };
  }

  /** The thread (null: none, or not `resourceId`'s when it is given). */
  async get(threadId: string, resourceId?: string): Promise<StorageThreadType | null> {
    const found = await this.owned(threadId);
    if (!found || (resourceId !== undefined && resourceId !== found.owner)) return null;
    return threadOf(found.info, found.owner, await this.records.thread(found.owner, threadId));
  }

  /**
   * The thread registered to `owner` (registered now when it is not); another owner's thread is `CONFLICT`.
   * Answers its session.
   */
  async claim(threadId: string, owner: string): Promise<SessionInfo> {
    assertSessionId(threadId, "threadId");
    parseOwner(owner, "resourceId");
    let info = await this.registry.get(threadId);
    if (!info) {
      try {
        info = await this.registry.create({ id: threadId, name: "", owner, source: MASTRA_SOURCE });
      } catch (error) {
        if (!(error instanceof SessionError && error.code === "CONFLICT")) throw error;
        info = await this.registry.get(threadId);
      }
    }
    if (!info || info.owner !== owner) {
      throw new SessionError("CONFLICT", `Thread "${threadId}" is not resource "${owner}"'s`);
    }
    if (info.source !== MASTRA_SOURCE) {
      throw new SessionError("CONFLICT", `Session "${threadId}" exists and is not a Mastra thread`);
    }
    this.remember(threadId, owner);
    return info;
  }

  /** The owner this process last found the thread registered to (for guarded writes only; see `known`). */
  knownOwner(threadId: string): string | undefined {
    return this.known.get(threadId);
  }

  /** Forgets the owners of threads (a guarded write found one changed). */
  forget(threadIds: Iterable<string>): void {
    for (const id of threadIds) this.known.delete(id);
  }

  private remember(threadId: string, owner: string): void {
    this.known.delete(threadId);
    this.known.set(threadId, owner);
    if (this.known.size > REMEMBERED) this.known.delete(this.known.keys().next().value as string);
  }

  /** Saves a thread (an upsert of its fields); a thread of another resource is `CONFLICT`. */
  async save(thread: StorageThreadType): Promise<StorageThreadType> {
    await this.claim(thread.id, thread.resourceId);
    await this.records.putThread(thread.resourceId, thread.id, {
      title: thread.title,
      metadata: thread.metadata,
      createdAt: iso(thread.createdAt),
      updatedAt: iso(thread.updatedAt),
    });
    return thread;
  }

  /** Updates the title and merges the metadata (an omitted one is left); null when there is no such thread. */
  async update(
    id: string,
    title: string | undefined,
    metadata: Record<string, unknown> | undefined,
  ): Promise<StorageThreadType | null> {
    const found = await this.owned(id);
    if (!found) return null;
    const old = await this.records.thread(found.owner, id);
    const record: ThreadRecord = {
      title: title ?? old?.title,
      metadata: metadata === undefined ? old?.metadata : { ...old?.metadata, ...metadata },
      createdAt: old?.createdAt ?? found.info.created_at,
      updatedAt: new Date().toISOString(),
    };
    await this.records.putThread(found.owner, id, record);
    return threadOf(found.info, found.owner, record);
  }

  /** Erases the thread's session (its messages and everything derived) and its record. */
  async delete(threadId: string): Promise<void> {
    this.known.delete(threadId);
    const found = await this.owned(threadId);
    if (this.registry.erase) await this.registry.erase(threadId);
    else await this.registry.delete(threadId);
    if (found) await this.records.deleteThread(found.owner, threadId);
  }

  /** Every thread of `owner`, or of every owner (the registry's Mastra sessions) when undefined. */
  async *all(owner: string | undefined): AsyncGenerator<StorageThreadType> {
    if (owner !== undefined) {
      for await (const [id, record] of this.records.threads(owner)) {
        const info = await this.registry.get(id);
        if (info?.owner === owner) yield threadOf(info, owner, record);
      }
      return;
    }
    for await (const info of this.registry.scan({ source: MASTRA_SOURCE })) {
      if (info.owner === undefined) continue;
      yield threadOf(info, info.owner, await this.records.thread(info.owner, info.id));
    }
  }
}
