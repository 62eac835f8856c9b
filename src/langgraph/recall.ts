/**
 * Recall over LangGraph threads (docs/LANGGRAPH.md, "Recall"): after `put` stores a new version of the root graph's
 * messages channel, the messages that are new relative to the parent checkpoint's list are appended to the thread's
 * session, each parented on the message before it in the list, so a fork becomes a branch of the session's tree and
 * history, search, `session_search` and facts read the graph's conversation. A message whose content changed under
 * the same id is updated in place; a removal is not reflected (the session keeps what any checkpoint held).
 *
 * The parent's list is known without a read on a linear run: the saver remembers, per thread, the last list it put
 * or read with its checkpoint id, and a message the graph carried over is the same object, so the diff is one pass
 * of identity checks. Otherwise (a fork, another process) the parent checkpoint's list is read once.
 */
import type { SessionMessage } from "../contract/message.js";
import type { SessionProvider } from "../contract/provider.js";
import { SessionError } from "../errors.js";
import { emitWarning } from "../runtime/warn.js";
import { langchainId, sessionMessageOf } from "./messages.js";

/** Where recall writes: the store's sessions. */
export interface RecallStore {
  session(sessionId: string): SessionProvider;
}

// A message of the parent's list, by id: the graph's object and, once computed, the JSON of its session message.
interface Entry {
  value: unknown;
  json?: string;
}

// The list of a thread's checkpoint: the graph's objects, and the ids the store refused (too large), which no
// message follows.
interface Seen {
  checkpointId: string;
  values: readonly unknown[];
  refused: ReadonlySet<string>;
}

// Threads whose last list is remembered (the oldest forgotten first).
const REMEMBERED = 128;

const entriesOf = (list: readonly unknown[]): Map<string, Entry> => {
  const entries = new Map<string, Entry>();
  for (const value of list) {
    const id = langchainId(value);
    if (id !== undefined) entries.set(id, { value });
  }
  return entries;
};

/**
 * Runs a write of `message`; false when the store's write policy refuses it as too large (`maxMessageBytes`): the
 * message is then not recalled, said by a warning (`AgentSessionRecallWarning`), and the graph's step goes on, as it
 * would go on with a message that has no id. Every other error is thrown.
 */
async function kept(message: SessionMessage, write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (!(error instanceof SessionError && error.code === "TOO_LARGE")) throw error;
    emitWarning(error, "AgentSessionRecallWarning", `LangGraph message "${message.id}" is not recalled`);
    return false;
  }
}

// The last message before `end` that the session holds (null: none), a step's first new message's parent.
const lastKept = (list: readonly unknown[], end: number, refused: ReadonlySet<string>): string | null => {
  for (let i = end - 1; i >= 0; i--) {
    const id = langchainId(list[i]);
    if (id !== undefined && !refused.has(id)) return id;
  }
  return null;
};

const jsonOf = (entry: Entry): string => {
  entry.json ??= JSON.stringify(sessionMessageOf(entry.value) ?? null);
  return entry.json;
};

/** Indexes a thread's messages channel into its session (see the file's comment). */
export class MessageRecall {
  private readonly seen = new Map<string, Seen>();

  constructor(
    private readonly store: RecallStore,
    /** Reads the messages list of a checkpoint of the root namespace (undefined: no list). */
    private readonly listAt: (threadId: string, checkpointId: string) => Promise<unknown[] | undefined>,
  ) {}

  /** Remembers the list a read answered for a checkpoint of the root namespace (the next put's likely parent). */
  saw(threadId: string, checkpointId: string, list: unknown): void {
    if (!Array.isArray(list)) return;
    const refused = this.seen.get(threadId)?.refused ?? new Set<string>();
    this.remember(threadId, { checkpointId, values: [...list], refused });
  }

  /**
   * Indexes checkpoint `checkpointId`, made from `parentId`: `list` is the channel's new value, or undefined when the
   * checkpoint did not change the channel.
   */
  async afterPut(
    threadId: string,
    parentId: string | undefined,
    checkpointId: string,
    list: unknown[] | undefined,
  ): Promise<void> {
    const known = this.seen.get(threadId);
    const hit = known !== undefined && parentId !== undefined && known.checkpointId === parentId;
    if (list === undefined) {
      if (hit) this.remember(threadId, { ...known, checkpointId });
      return;
    }
    // Forgotten while writing: a write that fails leaves the next put to read its parent.
    this.seen.delete(threadId);
    const refused = new Set(hit ? known.refused : []);
    const prior =
      parentId === undefined ? [] : hit ? known.values : ((await this.listAt(threadId, parentId)) ?? []);
    const provider = this.store.session(threadId);
    // The common step: the parent's list, the very objects, and new messages at its end; only those are looked at.
    let start = 0;
    while (start < prior.length && start < list.length && list[start] === prior[start]) start++;
    if (start === prior.length) {
      let previous = lastKept(list, start, refused);
      for (let i = start; i < list.length; i++)
        previous = await this.add(provider, list, i, previous, refused);
    } else {
      // A rewritten list (an edit, a removal) or objects read back: compared with the parent's by id.
      const entries = entriesOf(prior);
      let previous: string | null = null;
      for (let i = 0; i < list.length; i++) {
        const value = list[i];
        const id = langchainId(value);
        if (id === undefined) continue; // no id to keep it by: neither indexed nor a parent
        const old = entries.get(id);
        // A message refused before (too large) is tried again as new; an edit refused keeps the stored content.
        if (old === undefined || refused.has(id)) {
          previous = await this.add(provider, list, i, previous, refused);
          continue;
        }
        if (old.value !== value) {
          const message = sessionMessageOf(value) as SessionMessage;
          if (jsonOf(old) !== JSON.stringify(message))
            await kept(message, () => provider.updateMessage(message));
        }
        previous = id;
      }
    }
    this.remember(threadId, { checkpointId, values: [...list], refused });
  }

  // Appends `list[at]` after `previous`; answers the id the next message follows (it, or `previous` when it was
  // refused or has no id).
  private async add(
    provider: SessionProvider,
    list: readonly unknown[],
    at: number,
    previous: string | null,
    refused: Set<string>,
  ): Promise<string | null> {
    const message = sessionMessageOf(list[at]);
    if (message === undefined) return previous;
    if (await this.append(provider, message, previous, list, at)) {
      refused.delete(message.id);
      return message.id;
    }
    refused.add(message.id);
    return previous;
  }

  // Appends after `parentId`; answers whether the message was kept. A parent the session lacks (a thread written
  // before recall, or a put whose indexing failed after its checkpoint was stored) gets the list's earlier messages
  // appended first, and the message then follows the last of them that was kept.
  private async append(
    provider: SessionProvider,
    message: SessionMessage,
    parentId: string | null,
    list: readonly unknown[],
    at: number,
  ): Promise<boolean> {
    try {
      return await kept(message, () => provider.appendMessage(message, parentId));
    } catch (error) {
      if (!(error instanceof SessionError && error.code === "PARENT_NOT_FOUND")) throw error;
      let previous: string | null = null;
      for (const value of list.slice(0, at)) {
        const earlier = sessionMessageOf(value);
        if (earlier && (await kept(earlier, () => provider.appendMessage(earlier, previous))))
          previous = earlier.id;
      }
      return kept(message, () => provider.appendMessage(message, previous));
    }
  }

  private remember(threadId: string, seen: Seen): void {
    this.seen.delete(threadId);
    this.seen.set(threadId, seen);
    if (this.seen.size > REMEMBERED) this.seen.delete(this.seen.keys().next().value as string);
  }
}
