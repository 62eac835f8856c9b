import type { AgentInputItem, Session as AgentsSessionInterface } from "@openai/agents-core";
import { chatMessageId } from "../ai-sdk/storage.js";
import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import { Session } from "../session/session.js";
import type { SessionSource } from "../session/source.js";
import { itemToMessage, messageToItem } from "./items.js";

/**
 * The OpenAI Agents SDK's `Session` over any agent-session store: `run(agent, input, { session })` appends its
 * items to this conversation's active path (branches, search, compaction overlays and the CLI all see them).
 */
export class OpenAIAgentsSession implements AgentsSessionInterface {
  /** The conversation the items are stored in. */
  readonly session: Session;

  /**
   * Items of `sessionId` in `source` (a store, a SQLite path or handle), or in an existing `Session`. Without a
   * `sessionId`, a new random one (as the SDK's `MemorySession` does): adapters built without one never share a
   * conversation; read it back with {@link getSessionId} to continue it later.
   */
  constructor(source: Session | SessionSource, sessionId?: string) {
    if (source instanceof Session) {
      if (sessionId !== undefined && sessionId !== source.sessionId) {
        throw new SessionError("INVALID_ARGUMENT", "Pass a store with a session id, or a Session alone", {
          issues: [{ path: "sessionId", rule: "conflict" }],
        });
      }
      this.session = source;
    } else {
      this.session = Session.create(source).forSession(sessionId ?? crypto.randomUUID());
    }
  }

  /** The agent-session id of this conversation. */
  async getSessionId(): Promise<string> {
    return this.session.sessionId;
  }

  /** The active path's items, oldest first; with `limit`, only the newest `limit` (read from the end of the path). */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit === undefined) return (await this.session.getHistory()).map(messageToItem);
    if (!Number.isInteger(limit) || limit < 0) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `limit must be a whole number >= 0, got ${describe(limit)}`,
        {
          issues: [{ path: "limit", rule: typeof limit === "number" ? "range" : "type" }],
        },
      );
    }
    if (limit === 0) return [];
    // Zero bytes with a minimum of `limit` messages: exactly the newest `limit`, without reading the whole path.
    const { messages } = await this.session.getRecentHistory(0, limit);
    return messages.slice(-limit).map(messageToItem);
  }

  /** Appends the items, in order, after the latest message. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items))
      throw new SessionError("INVALID_ARGUMENT", "addItems needs an array of items", {
        issues: [{ path: "items", rule: "type" }],
      });
    for (const item of items)
      await this.session.appendMessage(itemToMessage(item, `item-${chatMessageId()}`));
  }

  /** Removes the newest item of the active path and returns it (undefined when there is none). */
  async popItem(): Promise<AgentInputItem | undefined> {
    const leaf = await this.session.getLatestLeaf();
    if (!leaf) return undefined;
    await this.session.deleteMessages([leaf.id]);
    return messageToItem(leaf);
  }

  /** Removes every item (and overlay) of this conversation. */
  async clearSession(): Promise<void> {
    await this.session.clearMessages();
  }

  /** Releases storage the adapter opened itself (a SQLite path). */
  async close(): Promise<void> {
    await this.session.close();
  }
}
