import type { SessionStore } from "../../contract/store.js";
import { SessionError } from "../../errors.js";
import { assertNamedSessionId } from "../../message/ids.js";
import { emitWarning } from "../../runtime/warn.js";
import { optionalOwner, ownedBy, parseOwner } from "../../store/owner.js";
import { alreadyExists, assertAppendArgs } from "../checks.js";
import { buildState, normalize } from "../codec.js";
import type { AgentMessage, SessionPatch, SessionState, SessionStorage, UsageEntry } from "../types.js";
import {
  AGENT_SOURCE,
  type AgentHeader,
  fromSessionMessage,
  headerKey,
  headerOf,
  ledgerOf,
  pushHeaderUsage,
  toSessionMessage,
  updatedAtOf,
} from "./mapping.js";
import { assertSessionState, assertStateMessages } from "./state-schema.js";
import {
  type AgentCapableStore,
  agentIds,
  appendTail,
  assertAgentCapable,
  assertSameMessage,
  counters,
  createEntry,
  notFound,
  readHeader,
  register,
  removeAgentSession,
  rewriteStored,
} from "./store-writes.js";

/** Options of {@link StoreSessionStorage}. */
export interface StoreSessionStorageOptions {
  /** Close the store on `close()` (default false: a store you pass in stays open). */
  ownsStore?: boolean;
  /**
   * Only this owner's sessions (see `forOwner`): new ones are registered with it; another owner's session, or an
   * unowned one, is not loaded, listed, written or deleted here.
   */
  owner?: string | undefined;
}

/**
 * Agent sessions in any `SessionStore` (MemoryStore, SqliteStore, PostgresStore), as ordinary sessions: each
 * message a row on a linear path (readable parts + the exact ModelMessage), the session a registry row (source
 * `"agent"`, fork parent, usage counters), and a small header block (`_agent_state_<id>`: metadata, times, fork
 * parent, ledger entries written without a message). So the CLI, viewer, search and export see agent sessions.
 */
export class StoreSessionStorage implements SessionStorage {
  private readonly opening: Promise<AgentCapableStore>;
  // Shared with the owner views of this storage, so their writes of one session chain too.
  private locks = new Map<string, Promise<unknown>>();
  /** The owner every session of this storage belongs to; undefined for an unscoped storage. */
  readonly owner: string | undefined;

  constructor(
    store: SessionStore | Promise<SessionStore>,
    private readonly options: StoreSessionStorageOptions = {},
  ) {
    this.owner = optionalOwner(options.owner);
    this.opening = Promise.resolve(store).then((resolved) => {
      assertAgentCapable(resolved);
      return resolved;
    });
    // Reported by the first call that needs the store, not as an unhandled rejection.
    this.opening.catch(() => undefined);
  }

  /** The store the sessions live in, once it is open. */
  store(): Promise<AgentCapableStore> {
    return this.opening;
  }

  /**
   * The same store as one owner sees it: sessions it creates are `owner`'s, and another owner's session (or an
   * unowned one) is unknown there (`load` undefined, so a resume or fork of it is `NOT_FOUND`). It shares the store
   * and never closes it. On a storage scoped already, only its own owner is accepted.
   */
  forOwner(owner: string): StoreSessionStorage {
    const scoped = parseOwner(owner);
    if (this.owner !== undefined) {
      if (scoped === this.owner) return this;
      throw new SessionError("INVALID_ARGUMENT", `This storage is scoped to another owner`, {
        issues: [{ path: "owner", rule: "conflict" }],
      });
    }
    const view = new StoreSessionStorage(this.opening, { owner: scoped });
    view.locks = this.locks;
    return view;
  }

  /** Whether a registry row is visible here: every row when unscoped, else only the owner's. */
  private visible(info: { owner?: string | undefined } | null): boolean {
    return this.owner === undefined || ownedBy(info, this.owner);
  }

  /** Runs `body` after every earlier write of the same session in this process (appends must chain in order). */
  private locked<T>(id: string, body: (store: AgentCapableStore) => Promise<T>): Promise<T> {
    const previous = this.locks.get(id) ?? Promise.resolve();
    const result = previous.then(async () => body(await this.store()));
    const tail = result.catch(() => undefined);
    this.locks.set(id, tail);
    void tail.then(() => {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    });
    return result;
  }

  async save(state: SessionState): Promise<void> {
    assertSessionState(state);
    const messages = normalize(state.messages);
    await this.locked(state.id, (store) => this.write(store, state.id, messages, headerOf(state), true));
  }

  /**
   * Like save, but `CONFLICT` when the id is taken: the registry's insert-if-absent decides, so of two concurrent
   * creates (in any process) exactly one goes on; a failure after it removes the row again.
   */
  async create(state: SessionState): Promise<void> {
    assertSessionState(state);
    const messages = normalize(state.messages);
    const header = headerOf(state);
    await this.locked(state.id, async (store) => {
      try {
        await createEntry(store, state.id, header, this.owner);
      } catch (error) {
        if (error instanceof SessionError && error.code === "CONFLICT") throw alreadyExists(state.id);
        throw error;
      }
      try {
        await this.write(store, state.id, messages, header, true);
      } catch (error) {
        // Another owner's session registered under this id meanwhile (the write's NOT_FOUND) is not removed.
        // The write's error is the answer; a failed clean-up is reported beside it, never dropped.
        await removeAgentSession(store, state.id, this.owner).catch((cleanup: unknown) =>
          emitWarning(
            cleanup,
            "AgentSessionStorageWarning",
            `session ${JSON.stringify(state.id)} was left registered`,
          ),
        );
        throw error;
      }
    });
  }

  /**
   * @internal writes a whole state: messages whose id and place are unchanged are replaced in place (identical
   * ones write nothing), the rest of the stored path is deleted and the new tail appended in steps of
   * {@link WRITE_BATCH} messages, one transaction each; `countUsage` false leaves the registry's counters alone
   * unless this call registered the session. Scoped, each write checks the owner in its transaction.
   */
  async write(
    store: AgentCapableStore,
    id: string,
    messages: AgentMessage[],
    header: AgentHeader,
    countUsage: boolean,
  ): Promise<void> {
    const { info, created } = await register(store, id, header, this.owner);
    const path = await store.session(id).getHistory();
    let kept = 0;
    while (kept < path.length && kept < messages.length && path[kept]!.id === messages[kept]!.id) kept++;
    const rewrites = messages.slice(0, kept).map((message) => toSessionMessage(message));
    const stale = path.slice(kept).map((message) => message.id);
    await rewriteStored(store, id, rewrites, stale, this.owner);
    const next = counters(header.usage);
    const delta = {
      inputTokens: next.inputTokens - info.input_tokens,
      outputTokens: next.outputTokens - info.output_tokens,
      cacheReadTokens: next.cacheReadTokens - info.cache_read_tokens,
      cacheWriteTokens: next.cacheWriteTokens - info.cache_write_tokens,
      cost: next.cost - info.estimated_cost,
    };
    // The counters ride in the last step, so an owner-scoped save's registry write is guarded like the rest.
    await appendTail(
      store,
      id,
      messages.slice(kept),
      kept > 0 ? messages[kept - 1]!.id : null,
      {
        block: { key: headerKey(id), content: JSON.stringify(header) },
        usage: created || countUsage ? delta : undefined,
      },
      this.owner,
    );
  }

  async load(sessionId: string): Promise<SessionState | undefined> {
    assertNamedSessionId(sessionId);
    const store = await this.store();
    const [header, info] = await Promise.all([readHeader(store, sessionId), store.registry.get(sessionId)]);
    if (!header || info?.source !== AGENT_SOURCE || !this.visible(info)) return undefined;
    const path = await store.session(sessionId).getHistory();
    const messages = path.map(fromSessionMessage);
    const entries = ledgerOf(header, path);
    // An append that changed nothing else leaves the header alone: its time rides on its last message.
    const updatedAt = path.reduce((at, message) => Math.max(at, updatedAtOf(message)), header.updatedAt);
    // The memory store hands out its own objects; SQL stores parse fresh ones on every read.
    const copy =
      store.backend === "memory" ? normalize({ messages, entries, header }) : { messages, entries, header };
    return buildState({
      id: sessionId,
      messages: copy.messages,
      entries: copy.entries,
      metadata: copy.header.metadata,
      createdAt: header.createdAt,
      updatedAt,
      parentId: header.parentId,
    });
  }

  async delete(sessionId: string): Promise<void> {
    assertNamedSessionId(sessionId);
    await this.locked(sessionId, async (store) => {
      const info = await store.registry.get(sessionId);
      // Only agent sessions: another conversation under this id is not this storage's to delete.
      if (info?.source !== AGENT_SOURCE || !this.visible(info)) return;
      await removeAgentSession(store, sessionId, this.owner);
    });
  }

  async list(): Promise<string[]> {
    return agentIds(await this.store(), this.owner);
  }

  /**
   * Appends after the latest leaf, one row per message (the step's ledger entries ride on its last message), then
   * rewrites the small header (times, metadata) and bumps the registry's counters: no row of the session is read
   * but its leaf, so the cost does not grow with the session's length.
   */
  async appendMessages(sessionId: string, messages: AgentMessage[], patch: SessionPatch): Promise<void> {
    assertNamedSessionId(sessionId);
    assertAppendArgs(messages, patch);
    const added = normalize(messages);
    assertStateMessages(added);
    const usage = normalize(patch.usage ?? []);
    const metadata = patch.metadata === undefined ? undefined : normalize(patch.metadata);
    await this.locked(sessionId, async (store) => {
      // Only when scoped, one read of the registry row first, so nothing of another owner's session is read or
      // compared (its header, a stored message id); the step checks the owner again in its own transaction, as
      // this check alone would race an erase and re-create of the id by another owner.
      if (this.owner !== undefined && !ownedBy(await store.registry.get(sessionId), this.owner))
        throw notFound(sessionId);
      const totals = usage.length > 0 ? counters(usage) : undefined;
      await this.appendStep(store, sessionId, added, usage, metadata, patch.updatedAt, totals);
    });
  }

  /**
   * One step write (one transaction, one commit on SQL stores) and nothing read first. The messages go after the latest
   * leaf, the last one carrying the step's usage and `updatedAt`; the header is rewritten only when something in it
   * changes (metadata, or ledger entries without a message); the registry row (which must be an agent session's,
   * and this storage's owner's when scoped) takes the counters.
   */
  private async appendStep(
    store: AgentCapableStore,
    sessionId: string,
    added: AgentMessage[],
    usage: UsageEntry[],
    metadata: Record<string, unknown> | undefined,
    updatedAt: number,
    totals: ReturnType<typeof counters> | undefined,
  ): Promise<void> {
    let block: { key: string; content: string } | undefined;
    if (added.length === 0 || metadata !== undefined) {
      const header = await readHeader(store, sessionId);
      if (!header) throw new SessionError("NOT_FOUND", `Session not found: ${sessionId}`);
      if (added.length === 0 && usage.length > 0) {
        // Only a message-less step reads the leaf: its entries load after that message's, as they were written.
        const leaf = await store.session(sessionId).getLatestLeaf();
        pushHeaderUsage(header, usage, leaf?.id ?? null);
      }
      header.updatedAt = updatedAt;
      if (metadata !== undefined) header.metadata = metadata;
      block = { key: headerKey(sessionId), content: JSON.stringify(header) };
    }
    const last = added.length - 1;
    await store.writeStep({
      sessionId,
      messages: added.map((message, i) =>
        i === last ? toSessionMessage(message, usage, updatedAt) : toSessionMessage(message),
      ),
      parentId: undefined,
      guard: true,
      block,
      usage: totals,
      source: AGENT_SOURCE,
      owner: this.owner,
      check: (i, result) => assertSameMessage(added[i]!, result),
    });
  }

  /** Closes the store when this storage opened it. */
  async close(): Promise<void> {
    if (!this.options.ownsStore) return;
    const store = await this.opening.catch(() => undefined);
    await store?.close();
  }
}

/** Agent sessions in `store` (see {@link StoreSessionStorage}); the store stays open on `close()`. */
export function storeSessionStorage(store: SessionStore): StoreSessionStorage {
  return new StoreSessionStorage(store);
}
