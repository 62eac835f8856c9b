/**
 * Mastra's messages on a store (docs/MASTRA.md): each one a session message of its thread's session, appended after
 * the session's latest message (a linear session), read in the order of the caller's `createdAt` through the
 * timed-message indexes (sql/timed-messages/), which also find a message by id alone. A save is an upsert: a message
 * stored in another thread of the same resource moves (deleted there, appended here); one of another resource is
 * refused (`CONFLICT`), never moved or read.
 */
import type { MastraDBMessage } from "@mastra/core/memory";
import type { SessionMessage } from "../contract/message.js";
import type { SessionProvider } from "../contract/provider.js";
import type { StepCapableStore } from "../contract/step.js";
import { SessionError } from "../errors.js";
import type { TimedMessages } from "../sql/timed-messages/reads.js";
import type { LocatedMessage } from "../sql/timed-messages/statements.js";
import { deepMerge, mastraMessageOf, sessionMessageOf } from "./messages.js";
import { saveMessages } from "./save.js";
import type { MastraThreads } from "./threads.js";

/** A store's sessions, by id. */
export type Sessions = (sessionId: string) => SessionProvider;

/** A message update as Mastra's `updateMessages` takes it. */
export type MessagePatch = Partial<Omit<MastraDBMessage, "createdAt">> & { id: string };

type Loose = Record<string, unknown>;

/** Mastra's message operations over the store's sessions. */
export class MastraMessages {
  constructor(
    private readonly sessions: Sessions,
    private readonly timed: TimedMessages,
    private readonly threads: MastraThreads,
    private readonly steps: StepCapableStore,
  ) {}

  /** Where Mastra's messages among `ids` are stored: only in the door's own threads (threads.ts `owned`). */
  async locate(ids: readonly string[]): Promise<{ located: LocatedMessage[]; owners: Map<string, string> }> {
    const all = await this.timed.locate(ids);
    const owners = await this.ownersOf(all.map((at) => at.sessionId));
    return { located: all.filter((at) => owners.has(at.sessionId)), owners };
  }

  /** The owner of each Mastra thread among the sessions (registry reads, one per session; others left out). */
  async ownersOf(sessionIds: Iterable<string>): Promise<Map<string, string>> {
    const owners = new Map<string, string>();
    for (const id of new Set(sessionIds)) {
      const found = await this.threads.owned(id);
      if (found) owners.set(id, found.owner);
    }
    return owners;
  }

  /**
   * The messages at `located`, opened, in that order (a message gone meanwhile is left out): one read a session
   * where the store reads many at once, else one a message.
   */
  async read(located: readonly LocatedMessage[], owners: Map<string, string>): Promise<MastraDBMessage[]> {
    const found = new Map<string, SessionMessage>();
    const bySession = new Map<string, string[]>();
    for (const at of located) bySession.set(at.sessionId, [...(bySession.get(at.sessionId) ?? []), at.id]);
    for (const [sessionId, ids] of bySession) {
      const messages = this.timed.messagesOf
        ? await this.timed.messagesOf(sessionId, ids)
        : await Promise.all(ids.map((id) => this.sessions(sessionId).getMessage(id)));
      for (const message of messages) if (message) found.set(`${sessionId}\u0000${message.id}`, message);
    }
    const out: MastraDBMessage[] = [];
    for (const at of located) {
      const message = found.get(`${at.sessionId}\u0000${at.id}`);
      const owner = owners.get(at.sessionId);
      if (message && owner !== undefined) out.push(mastraMessageOf(message, at.sessionId, owner));
    }
    return out;
  }

  /** Saves (upserts) the messages; answers them as stored (save.ts). */
  save(messages: readonly MastraDBMessage[]): Promise<MastraDBMessage[]> {
    return saveMessages(this.steps, this.timed, this.threads, messages);
  }

  /** Applies the patches (content merged, its metadata deeply; a new `threadId` moves the message); answers them. */
  async update(patches: readonly MessagePatch[]): Promise<MastraDBMessage[]> {
    const where = await this.whereStored(patches.map((p) => p.id));
    const owners = await this.ownersOf([...where.values()]);
    const out: MastraDBMessage[] = [];
    for (const patch of patches) {
      const sessionId = where.get(patch.id);
      const owner = sessionId === undefined ? undefined : owners.get(sessionId);
      if (sessionId === undefined || owner === undefined) continue;
      const stored = await this.sessions(sessionId).getMessage(patch.id);
      if (!stored) continue;
      const old = mastraMessageOf(stored, sessionId, owner) as unknown as Loose;
      const { id: _id, content, threadId, resourceId: _r, ...fields } = patch as unknown as Loose;
      const next: Loose = { ...old, ...fields };
      if (content !== undefined) {
        const oldContent = old.content as Loose;
        const patchContent = content as Loose;
        next.content = {
          ...oldContent,
          ...patchContent,
          metadata: deepMerge(oldContent.metadata ?? {}, patchContent.metadata ?? {}),
        };
      }
      const target = typeof threadId === "string" && threadId !== "" ? threadId : sessionId;
      next.threadId = target;
      if (target !== sessionId) await this.threads.claim(target, owner);
      const message = next as unknown as MastraDBMessage;
      await this.put(sessionMessageOf(message), target, owner, where);
      out.push(message);
    }
    return out;
  }

  /** Deletes the messages wherever they are stored. */
  async delete(ids: readonly string[]): Promise<void> {
    const bySession = new Map<string, string[]>();
    for (const at of (await this.locate(ids)).located) {
      const list = bySession.get(at.sessionId) ?? [];
      list.push(at.id);
      bySession.set(at.sessionId, list);
    }
    for (const [sessionId, list] of bySession)
      await this.sessions(sessionId).deleteMessages(list, { tip: "ancestor" });
  }

  // Where each stored id is (its session), for the Mastra threads only.
  private async whereStored(ids: readonly string[]): Promise<Map<string, string>> {
    const where = new Map<string, string>();
    for (const at of (await this.locate(ids)).located) where.set(at.id, at.sessionId);
    return where;
  }

  // Writes `message` into `threadId`'s session for `owner`: updated in place, moved from another thread of the
  // owner, or appended after the session's latest message.
  private async put(
    message: SessionMessage,
    threadId: string,
    owner: string,
    where: Map<string, string>,
  ): Promise<void> {
    const from = where.get(message.id);
    if (from === threadId) {
      await this.sessions(threadId).updateMessage(message);
      return;
    }
    if (from !== undefined) {
      const found = await this.threads.owned(from);
      if (found?.owner !== owner) {
        throw new SessionError(
          "CONFLICT",
          `Message "${message.id}" is stored in a thread of another resource`,
        );
      }
      await this.sessions(from).deleteMessages([message.id], { tip: "ancestor" });
    }
    await this.sessions(threadId).appendMessage(message);
    where.set(message.id, threadId);
  }
}
