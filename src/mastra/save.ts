/**
 * Mastra's `saveMessages` (docs/MASTRA.md, "Costs"): an upsert of a batch of messages in few statements. New
 * messages of one thread are appended by a write that checks their ids itself, where the engine has one
 * (TimedMessages.appendNew). Otherwise the ids are looked up once; then each thread gets at most one step (contract/step.ts) of each kind — its new messages appended
 * as one chain, its stored ones replaced in place, the messages that move out of it removed — each one transaction
 * whose registry guard checks the thread is still a Mastra thread of the resource, and touches it. So a thread's
 * owner, once found, is not read again: a thread deleted or registered to another owner by someone else refuses the
 * guarded write (`NOT_FOUND`), and the save reads the registry and runs again.
 */
import type { MastraDBMessage } from "@mastra/core/memory";
import type { SessionMessage } from "../contract/message.js";
import type { StepCapableStore } from "../contract/step.js";
import { SessionError } from "../errors.js";
import type { TimedMessages } from "../sql/timed-messages/reads.js";
import { userError } from "./errors.js";
import { createdAtOf, sessionMessageOf } from "./messages.js";
import { MASTRA_SOURCE, type MastraThreads } from "./threads.js";

/** What a thread's writes of one save are. */
interface ThreadWrites {
  owner: string;
  append: SessionMessage[];
  replace: SessionMessage[];
  remove: string[];
}

const isNotFound = (error: unknown) => error instanceof SessionError && error.code === "NOT_FOUND";

/** Saves (upserts) the messages; answers them as stored. */
export async function saveMessages(
  store: StepCapableStore,
  timed: TimedMessages,
  threads: MastraThreads,
  messages: readonly MastraDBMessage[],
): Promise<MastraDBMessage[]> {
  const owners = new Map<string, string>();
  for (const message of messages) {
    if (!message.threadId)
      throw userError("SAVE_MESSAGES_NO_THREAD", `Message "${message.id}" has no threadId`);
    if (!message.resourceId)
      throw userError("SAVE_MESSAGES_NO_RESOURCE", `Message "${message.id}" has no resourceId`);
    const owner = owners.get(message.threadId);
    if (owner !== undefined && owner !== message.resourceId)
      throw new SessionError("CONFLICT", `Thread "${message.threadId}" is not resource "${owner}"'s`);
    owners.set(message.threadId, message.resourceId);
  }
  const saved = messages.map(
    (message) => ({ ...message, createdAt: createdAtOf(message.createdAt) }) as MastraDBMessage,
  );
  // The last of two messages with one id wins, as two saves one after the other.
  const last = new Map(saved.map((message) => [message.id, message]));
  const batch = [...last.values()];
  try {
    await write(store, timed, threads, owners, batch, true);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    // A thread this process knew changed meanwhile (deleted, or registered again): read the registry, then again.
    threads.forget(owners.keys());
    await write(store, timed, threads, owners, batch, false);
  }
  return saved;
}

// One try of a save: the threads claimed (unless known), the ids looked up, then each thread's steps.
async function write(
  store: StepCapableStore,
  timed: TimedMessages,
  threads: MastraThreads,
  owners: Map<string, string>,
  messages: readonly MastraDBMessage[],
  trustKnown: boolean,
): Promise<void> {
  for (const [threadId, owner] of owners)
    if (!trustKnown || threads.knownOwner(threadId) !== owner) await threads.claim(threadId, owner);
  // The commonest save, new messages into one thread: appended by a write that checks itself that no session holds
  // their ids (one statement on one Postgres server). When one does (an upsert, a move), or the engine has no such
  // write, nothing was written, and the ids are looked up as below.
  const [only] = owners;
  if (owners.size === 1 && only) {
    const [threadId, owner] = only;
    const append = { ...guardOf(threadId, owner), messages: messages.map(sessionMessageOf) };
    if (await timed.appendNew(append)) return;
  }
  const where = new Map<string, string>();
  const sessionOwners = new Map<string, string | undefined>(owners);
  for (const at of await timed.locate(messages.map((m) => m.id))) {
    if (!sessionOwners.has(at.sessionId)) {
      // A session this save does not write: a Mastra thread (its owner), or another door's (left alone).
      const known = trustKnown ? threads.knownOwner(at.sessionId) : undefined;
      sessionOwners.set(at.sessionId, known ?? (await threads.owned(at.sessionId))?.owner);
    }
    if (sessionOwners.get(at.sessionId) !== undefined) where.set(at.id, at.sessionId);
  }
  const plan = new Map<string, ThreadWrites>();
  const of = (threadId: string, owner: string) => {
    const writes = plan.get(threadId) ?? { owner, append: [], replace: [], remove: [] };
    plan.set(threadId, writes);
    return writes;
  };
  for (const message of messages) {
    const threadId = message.threadId as string;
    const owner = owners.get(threadId) as string;
    const stored = sessionMessageOf(message);
    const from = where.get(message.id);
    if (from === threadId) {
      of(threadId, owner).replace.push(stored);
      continue;
    }
    if (from !== undefined) {
      // Checked for every message before anything is written: a refused move writes nothing.
      if (sessionOwners.get(from) !== owner)
        throw new SessionError(
          "CONFLICT",
          `Message "${message.id}" is stored in a thread of another resource`,
        );
      of(from, owner).remove.push(message.id);
    }
    of(threadId, owner).append.push(stored);
  }
  // Removals first, so a message moved between two threads of a save is never in both.
  for (const [sessionId, writes] of plan)
    if (writes.remove.length > 0) await removeFrom(store, sessionId, writes);
  for (const [sessionId, writes] of plan) {
    if (!owners.has(sessionId)) continue;
    const guard = guardOf(sessionId, writes.owner);
    const again: SessionMessage[] = [];
    if (writes.append.length > 0) {
      // An id stored meanwhile (by another writer, after the look-up) is replaced instead.
      const check = (i: number, result: { inserted: boolean }) => {
        if (!result.inserted) again.push(writes.append[i] as SessionMessage);
      };
      await store.writeStep({ ...guard, messages: writes.append, check });
    }
    const replace = [...writes.replace, ...again];
    // A thread with nothing else written is touched all the same: its `updatedAt` is its last save (threads.ts).
    if (replace.length > 0 || writes.append.length === 0)
      await store.writeStep({ ...guard, messages: [], replace });
  }
}

// Removes the messages that leave a thread (moved to another of its owner's), guarded as the other writes.
async function removeFrom(store: StepCapableStore, sessionId: string, writes: ThreadWrites): Promise<void> {
  await store.writeStep({
    ...guardOf(sessionId, writes.owner),
    messages: [],
    remove: writes.remove,
    removeTip: "ancestor",
  });
}

// What every step of a save is guarded by: the registry row is still this owner's Mastra thread.
function guardOf(sessionId: string, owner: string) {
  return { sessionId, source: MASTRA_SOURCE, owner, parentId: undefined, guard: false } as const;
}
