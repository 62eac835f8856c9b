import type { ToolOutputLimits } from "../context/output.js";
import type { SessionContextOptions, WritableContextProvider } from "../context/types.js";
import { SessionError } from "../errors.js";
import { Session } from "../session/session.js";
import { resolveSource, type SessionSource } from "../session/source.js";
import type { SqliteOptions } from "../sqlite/open.js";
import {
  hasSessionRegistry,
  type RegistryCapableStore,
  type SessionInfo,
  type SessionStore,
} from "../store/types.js";
import type { SearchResult, SessionProvider } from "../types.js";
import { sessionBlockKeys } from "./copy.js";
import { assertSessionId } from "./input.js";
import { historyProvider } from "./search-tools.js";
import {
  type ManagerCompactAfterOptions,
  type ManagerCompactFunction,
  type ManagerCompactionErrorHandler,
  ManagerTemplates,
} from "./templates.js";
import { touchingStore } from "./touching-store.js";

/** Where a manager keeps its sessions: a store with a registry, or a SQLite path, handle or `sql`-tag object. */
export type ManagerSource = Exclude<SessionSource, SessionProvider>;

/**
 * The builder, the per-id Session cache and the registry plumbing of a {@link SessionManager} (split out to keep
 * files small; use `SessionManager`).
 */
export abstract class SessionManagerBase {
  /** The store every managed session lives in. */
  readonly store: RegistryCapableStore;
  private readonly ownsStore: boolean;
  private readonly sessionStore: SessionStore;
  protected readonly templates = new ManagerTemplates();
  private readonly sessions = new Map<string, Session>();
  private configured = false;

  constructor(source: ManagerSource, options: SqliteOptions = {}) {
    const resolved = resolveSource(source as SessionSource, options);
    if (resolved.kind !== "store") {
      throw new SessionError(
        "UNSUPPORTED",
        "SessionManager needs a store (or a SQLite path, handle or sql-tag object), not a single SessionProvider",
      );
    }
    if (!hasSessionRegistry(resolved.store)) {
      if (resolved.owned) void resolved.store.close();
      throw new SessionError(
        "UNSUPPORTED",
        `The ${resolved.store.backend} store has no session registry, which SessionManager needs`,
      );
    }
    this.store = resolved.store;
    this.ownsStore = resolved.owned;
    this.sessionStore = touchingStore(this.store, (id) => this.store.registry.touch(id));
  }

  /** Cross-session search (implemented by SessionManager). */
  abstract search(query: string, options?: { limit?: number }): Promise<SearchResult[]>;

  // Blocks and the prompt store decide what each session stores, so they are fixed once sessions exist (no cached
  // session misses a template); compaction settings are not and may change at any time (see `compaction`).
  private builder(method: string): ManagerTemplates {
    if (this.configured) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `${method}() must be called before the first getSession() (it decides what every session stores): create a new SessionManager on the same store with it`,
      );
    }
    return this.templates;
  }

  /** Changes a compaction template and applies it to every session already handed out. */
  private compaction(set: (templates: ManagerTemplates) => void, apply: (session: Session) => void): this {
    set(this.templates);
    for (const session of this.sessions.values()) apply(session);
    return this;
  }

  /** Adds a context block to every session; without a provider it is stored per session (`<label>_<sessionId>`). */
  withContext(label: string, options: SessionContextOptions = {}): this {
    this.builder("withContext").addBlock(label, options);
    return this;
  }

  /** Persists every session's frozen prompt (under `_system_prompt_<sessionId>` when no provider is given). */
  withCachedPrompt(provider?: WritableContextProvider): this {
    this.builder("withCachedPrompt").setCachedPrompt(provider);
    return this;
  }

  /** Registers the compaction function of every session (at any time, also for sessions already in use). */
  onCompaction(fn: ManagerCompactFunction): this {
    return this.compaction(
      (t) => t.setCompaction(fn),
      (s) => s.onCompaction(fn),
    );
  }

  /** Auto-compacts every session above `threshold` estimated tokens (`tokenCounter` as on Session); at any time. */
  compactAfter(threshold: number, options?: ManagerCompactAfterOptions): this {
    return this.compaction(
      (t) => t.setThreshold(threshold, options),
      (s) => s.compactAfter(threshold, options),
    );
  }

  /** Receives failures of automatic compaction in any managed session; at any time. */
  onCompactionError(handler: ManagerCompactionErrorHandler): this {
    return this.compaction(
      (t) => t.setErrorHandler(handler),
      (s) => s.onCompactionError(handler),
    );
  }

  /**
   * Bounds what the memory tools of every session and `session_search` return (`maxHitChars` per hit,
   * `maxOutputChars` per result; defaults 8,000 and 32,000), with a marker saying how to see the rest.
   */
  withToolOutputLimits(limits: Partial<ToolOutputLimits>): this {
    this.builder("withToolOutputLimits").setToolOutput(limits);
    return this;
  }

  /** Adds a read-only block `label` to every session through which the model searches all sessions. */
  withSearchableHistory(label: string): this {
    this.builder("withSearchableHistory").setHistoryLabel(label);
    return this;
  }

  /**
   * The Session for an id, built on first access with every template and then cached. It does not check the
   * registry (it is synchronous); the manager's own methods do.
   */
  getSession(sessionId: string): Session {
    assertSessionId(sessionId);
    let session = this.sessions.get(sessionId);
    if (!session) {
      this.configured = true;
      const history = historyProvider({
        countSessions: () => this.store.registry.count(),
        search: (query, options) => this.search(query, options),
      });
      session = this.templates.apply(Session.create(this.sessionStore).forSession(sessionId), history);
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  /** The registered row, or `NOT_FOUND`. */
  protected async require(sessionId: string): Promise<SessionInfo> {
    assertSessionId(sessionId);
    const info = await this.store.registry.get(sessionId);
    if (!info) throw new SessionError("NOT_FOUND", `Session "${sessionId}" not found`);
    return info;
  }

  /** Turns a registry `null` (the id vanished) into `NOT_FOUND`. */
  protected found(sessionId: string, info: SessionInfo | null): SessionInfo {
    if (!info) throw new SessionError("NOT_FOUND", `Session "${sessionId}" not found`);
    return info;
  }

  /** Labels whose rows a session owns: template blocks without a provider, plus blocks its cached Session added. */
  protected ownedLabels(sessionId: string): string[] {
    const labels = new Set(this.templates.autoWiredLabels());
    for (const block of this.sessions.get(sessionId)?.getContextBlocks() ?? []) labels.add(block.label);
    const history = this.templates.historyBlockLabel;
    if (history !== undefined) labels.delete(history);
    return [...labels];
  }

  /** Every context-block key the session owns (its auto-wired blocks and cached prompt). */
  protected blockKeys(sessionId: string): string[] {
    return sessionBlockKeys(this.ownedLabels(sessionId), sessionId);
  }

  /** Drops the cached Session of an id (after it was deleted). */
  protected forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** Closes the store when the manager opened it itself (a SQLite path). */
  async close(): Promise<void> {
    this.sessions.clear();
    if (this.ownsStore) await this.store.close();
  }
}
