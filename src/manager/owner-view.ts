/**
 * `SessionManager.forOwner(owner)`: the manager as one owner (a user, a tenant) sees it. Every read, search, tool,
 * fork, usage total and export covers that owner's sessions only; a session id of another owner, or of none, is
 * `NOT_FOUND` here (or null / false where the manager answers so), never its data. The filter is the registry's
 * owner column (an index range on the SQL stores) and, for search, the store's own owner scope (the owner's token
 * inside its search index, store/owner.ts ownerHash), so no other owner's rows are read.
 */
import type { ToolOutputLimits } from "../context/output.js";
import type { SessionToolSet } from "../context/tools.js";
import type { SessionMessage } from "../contract/message.js";
import type { SessionInfo } from "../contract/registry.js";
import type { SearchHit, SearchItem, WithFactHits } from "../contract/search.js";
import { hasTransfer, type TransferItem } from "../contract/transfer.js";
import { SessionError } from "../errors.js";
import { assertNamedSessionId } from "../message/ids.js";
import { optionsArg } from "../options-arg.js";
import type { Session } from "../session/session.js";
import type { ErasureReceipt } from "../store/erasure.js";
import { ownedBy, parseOwner } from "../store/owner.js";
import { OwnerFacts } from "./facts.js";
import { type CreateSessionOptions, listOptions } from "./input.js";
import { type ManagerSearchOptions, sessionTools } from "./search.js";
import type { SearchToolOptions } from "./search-tools.js";
import type { ManagerState } from "./state.js";

/** An owner's usage across its sessions. */
export interface OwnerUsage {
  sessions: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  estimated_cost: number;
}

/** The manager's methods a view calls once ownership is checked (an interface: the manager imports the view). */
export interface OwnedCalls<M extends SessionMessage> {
  create(name: string, options?: CreateSessionOptions): Promise<SessionInfo>;
  get(sessionId: string): Promise<SessionInfo | null>;
  getSession(sessionId: string): Session<M>;
  rename(sessionId: string, name: string): Promise<SessionInfo>;
  delete(sessionId: string): Promise<boolean>;
  erase(sessionId: string): Promise<ErasureReceipt>;
  eraseOwner(owner: string): Promise<ErasureReceipt>;
  fork(sessionId: string, atMessageId: string, name: string): Promise<SessionInfo>;
  compactAndSplit(sessionId: string, summary: string, name?: string): Promise<SessionInfo>;
  search(query: string, options: WithFactHits<ManagerSearchOptions>): Promise<SearchItem[]>;
  search(query: string, options?: ManagerSearchOptions | null): Promise<SearchHit[]>;
}

function notFound(sessionId: string): SessionError {
  return new SessionError("NOT_FOUND", `Session "${sessionId}" not found`);
}

/** One owner's sessions of a `SessionManager` (see the module comment). */
export class OwnerView<M extends SessionMessage = SessionMessage> {
  /** The owner every session of this view belongs to. */
  readonly owner: string;
  /** The owner's facts: list, search, get, forget and learn, in the owner's scope only (docs/FACTS.md, "Doors"). */
  readonly facts: OwnerFacts<M>;

  constructor(
    private readonly manager: OwnedCalls<M>,
    private readonly state: ManagerState<M>,
    owner: string,
  ) {
    this.owner = parseOwner(owner);
    this.facts = new OwnerFacts<M>(state, this.owner, (sessionId) => this.require(sessionId));
  }

  /** The row of an owned session, or `NOT_FOUND` (another owner's and an unowned session alike). */
  private async require(sessionId: string): Promise<SessionInfo> {
    assertNamedSessionId(sessionId);
    const info = await this.state.store.registry.get(sessionId);
    if (!ownedBy(info, this.owner)) throw notFound(sessionId);
    return info as SessionInfo;
  }

  /** Registers a session of this owner (the manager's `create`; an `owner` option naming another is refused). */
  async create(name: string, options?: CreateSessionOptions): Promise<SessionInfo> {
    const given = optionsArg(options ?? null, "create") ?? {};
    if (given.owner !== undefined && given.owner !== null && given.owner !== this.owner) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `owner must be this view's owner "${this.owner}" or left out`,
        { issues: [{ path: "owner", rule: "conflict" }] },
      );
    }
    return this.manager.create(name, { ...given, owner: this.owner });
  }

  /** The row of an owned session, or null (also for another owner's session). */
  async get(sessionId: string): Promise<SessionInfo | null> {
    const info = await this.manager.get(sessionId);
    return ownedBy(info, this.owner) ? info : null;
  }

  /** The owner's sessions, newest activity first; an index range, other owners' rows are never read. */
  async list(options?: { limit?: number; offset?: number }): Promise<SessionInfo[]> {
    return this.state.store.registry.list({ ...listOptions(options), owner: this.owner });
  }

  /** The Session of an owned session (the manager's cached one); async, since ownership is read first. */
  async getSession(sessionId: string): Promise<Session<M>> {
    await this.require(sessionId);
    return this.manager.getSession(sessionId);
  }

  /**
   * The owner's Session of `sessionId`, registered for the owner first when the id is new: for a conversation whose
   * id the client chose (`persistChatTurn(await view.open(body.id), body)`, `new OpenAIAgentsSession(await
   * view.open(id))`). Another owner's session is `NOT_FOUND`, and so is an unregistered id that already holds
   * messages: they are no owner's (`create(name, { id })` adopts such messages on purpose).
   */
  async open(sessionId: string, name: string = sessionId): Promise<Session<M>> {
    assertNamedSessionId(sessionId);
    const { store } = this.state;
    if ((await store.registry.get(sessionId)) === null) {
      if ((await store.session(sessionId).getLatestLeaf()) !== null) throw notFound(sessionId);
      try {
        await this.create(name, { id: sessionId });
      } catch (error) {
        // Registered meanwhile (two requests of one new chat): the check below decides whose it is.
        if (!(error instanceof SessionError && error.code === "CONFLICT")) throw error;
      }
    }
    return this.getSession(sessionId);
  }

  /** Renames an owned session. */
  async rename(sessionId: string, name: string): Promise<SessionInfo> {
    await this.require(sessionId);
    return this.manager.rename(sessionId, name);
  }

  /** Deletes an owned session; false for an unknown id and for another owner's (which stays untouched). */
  async delete(sessionId: string): Promise<boolean> {
    assertNamedSessionId(sessionId);
    if (!ownedBy(await this.state.store.registry.get(sessionId), this.owner)) return false;
    return this.manager.delete(sessionId);
  }

  /** Erases an owned session (see SessionManager.erase); `NOT_FOUND` for another owner's, which stays untouched. */
  async erase(sessionId: string): Promise<ErasureReceipt> {
    await this.require(sessionId);
    return this.manager.erase(sessionId);
  }

  /** Erases every session of this owner (see SessionManager.eraseOwner); `NOT_FOUND` when it has none. */
  async eraseAll(): Promise<ErasureReceipt> {
    return this.manager.eraseOwner(this.owner);
  }

  /** Forks an owned session; the fork is the same owner's. */
  async fork(sessionId: string, atMessageId: string, name: string): Promise<SessionInfo> {
    await this.require(sessionId);
    return this.manager.fork(sessionId, atMessageId, name);
  }

  /** Ends an owned session and starts its continuation, the same owner's. */
  async compactAndSplit(sessionId: string, summary: string, name?: string): Promise<SessionInfo> {
    await this.require(sessionId);
    return this.manager.compactAndSplit(sessionId, summary, name);
  }

  /** Ranked recall over the owner's sessions only (`sessionId`/`sessionIds` narrow it further). */
  search(query: string, options: WithFactHits<ManagerSearchOptions>): Promise<SearchItem[]>;
  search(query: string, options?: ManagerSearchOptions | null): Promise<SearchHit[]>;
  async search(
    query: string,
    options?: ManagerSearchOptions | WithFactHits<ManagerSearchOptions> | null,
  ): Promise<SearchItem[]> {
    const given = optionsArg(options, "search") ?? {};
    if (given.sessionId !== undefined) await this.require(given.sessionId);
    // The union's two halves are the manager's two overloads; its implementation takes both.
    return this.manager.search(query, { ...given, owner: this.owner } as ManagerSearchOptions);
  }

  /** The model's `session_search` over the owner's sessions only (as the manager's `tools`). */
  tools(limits?: Partial<ToolOutputLimits>, options?: SearchToolOptions): SessionToolSet {
    return sessionTools(this.state, limits, (query, search) => this.search(query, search), options);
  }

  /** The owner's usage: the sum of its sessions' counters (one read of its registry rows). */
  async usage(): Promise<OwnerUsage> {
    const total: OwnerUsage = {
      sessions: 0,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      estimated_cost: 0,
    };
    for (const info of await this.list()) {
      total.sessions++;
      total.input_tokens += info.input_tokens;
      total.output_tokens += info.output_tokens;
      total.cache_read_tokens += info.cache_read_tokens;
      total.cache_write_tokens += info.cache_write_tokens;
      total.estimated_cost += info.estimated_cost;
    }
    return total;
  }

  /**
   * Every owned session's transfer stream, one after the other (each as `store.transfer.exportSession`), for
   * `importSession` per header; `UNSUPPORTED` on a store without transfer.
   */
  async *export(): AsyncGenerator<TransferItem> {
    const { store } = this.state;
    if (!hasTransfer(store))
      throw new SessionError("UNSUPPORTED", `The ${store.backend} store cannot export`);
    for (const info of await this.list()) yield* store.transfer.exportSession(info.id);
  }
}
