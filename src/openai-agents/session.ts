import type {
  AgentInputItem,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from "@openai/agents-core";
import { chatMessageId } from "../ai-sdk/storage.js";
import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import { Session } from "../session/session.js";
import type { SessionSource } from "../session/source.js";
import { appendItems } from "./append.js";
import { itemToMessage, messageToItem } from "./items.js";
import { applyTransaction } from "./transactions.js";

/**
 * The OpenAI Agents SDK's `Session` over any agent-session store: `run(agent, input, { session })` appends its
 * items to this conversation's active path (branches, search, compaction overlays and the CLI all see them).
 */
export class OpenAIAgentsSession implements SessionHistoryTransactionAwareSession {
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

  /**
   * The active path's items, oldest first; with `limit`, only the newest `limit` (read from the end of the path),
   * none for a limit <= 0 (as the SDK's `MemorySession`); a limit that is not a whole number is `INVALID_ARGUMENT`.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit === undefined) return (await this.session.getHistory()).map(messageToItem);
    if (!Number.isInteger(limit)) {
      throw new SessionError("INVALID_ARGUMENT", `limit must be a whole number, got ${describe(limit)}`, {
        issues: [{ path: "limit", rule: typeof limit === "number" ? "range" : "type" }],
      });
    }
    // As the SDK's MemorySession: a limit of zero or less asks for nothing.
    if (limit <= 0) return [];
    // Zero bytes with a minimum of `limit` messages: exactly the newest `limit`, without reading the whole path.
    const { messages } = await this.session.getRecentHistory(0, limit);
    return messages.slice(-limit).map(messageToItem);
  }

  /**
   * Appends the items, in order, after the latest message, all or nothing in one transaction of the store (as the
   * SDK's `MemorySession` stores a batch): another writer's items never fall between them.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items))
      throw new SessionError("INVALID_ARGUMENT", "addItems needs an array of items", {
        issues: [{ path: "items", rule: "type" }],
      });
    if (items.length === 0) return;
    // One step: a refused item stores none of the batch, and another writer's batch never falls inside it.
    await appendItems(
      this.session,
      items.map((item) => itemToMessage(item, `item-${chatMessageId()}`)),
    );
  }

  /**
   * The SDK's atomic, idempotent history change (`append_items`, `replace_suffix`; see ./transactions.ts): with
   * it the runner keeps what it may of a turn an output guardrail blocked.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    await applyTransaction(this.session, args, () => `item-${chatMessageId()}`);
  }

  /** Removes the newest item of the active path and returns it (undefined when there is none). */
  async popItem(): Promise<AgentInputItem | undefined> {
    const leaf = await this.session.getLatestLeaf();
    if (!leaf) return undefined;
    // The path becomes the previous items minus this one: a branch replace_suffix replaced must not come back.
    await this.session.deleteMessages([leaf.id], { tip: "ancestor" });
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
