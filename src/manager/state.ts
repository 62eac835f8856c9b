/**
 * The state a {@link SessionManager} shares with its helpers — the store, the per-id Session cache and the
 * templates — and the plumbing over it: opening the store, the builder guard, building sessions, registry checks
 * and the labels a session owns. Passed explicitly, so the manager class stays a list of short methods.
 */

import type { SessionMessage } from "../contract/message.js";
import type { SessionProvider } from "../contract/provider.js";
import { hasSessionRegistry, type RegistryCapableStore, type SessionInfo } from "../contract/registry.js";
import type { SearchHit } from "../contract/search.js";
import type { SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { assertNamedSessionId } from "../message/ids.js";
import { Session } from "../session/session.js";
import { resolveSource, type SessionSource } from "../session/source.js";
import type { SqliteOptions } from "../sql/engines/sqlite/open.js";
import { sessionBlockKeys } from "./copy.js";
import { retirableStore } from "./retire.js";
import { historyProvider } from "./search-tools.js";
import { ManagerTemplates } from "./templates.js";
import { touchingStore } from "./touching-store.js";

/** Where a manager keeps its sessions: a store with a registry, or a SQLite path, handle or `sql`-tag object. */
export type ManagerSource = Exclude<SessionSource, SessionProvider>;

/** A manager's internal state (`M`: the message type of every session it hands out). */
export interface ManagerState<M extends SessionMessage = SessionMessage> {
  readonly store: RegistryCapableStore;
  readonly ownsStore: boolean;
  /** The store sessions write through: every write touches the session's registry row. */
  readonly sessionStore: SessionStore;
  readonly templates: ManagerTemplates;
  readonly sessions: Map<string, Session<M>>;
  /** Turns off the writes of a cached Session (see retirableStore), by Session. */
  readonly retirers: WeakMap<Session<M>, () => void>;
  /** Set by the first getSession(): templates that decide what sessions store are fixed from then on. */
  configured: boolean;
  /** Background fact learners started by the manager (`startLearning`), closed with it. */
  readonly learners: Set<{ close(): Promise<void> }>;
}

/** Resolves the source to a store with a registry (`UNSUPPORTED` otherwise, closing a store it opened). */
export function openManagerState<M extends SessionMessage>(
  source: ManagerSource,
  options: SqliteOptions,
): ManagerState<M> {
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
  const store = resolved.store;
  return {
    store,
    ownsStore: resolved.owned,
    sessionStore: touchingStore(store, (id) => store.registry.touch(id)),
    templates: new ManagerTemplates(),
    sessions: new Map(),
    retirers: new WeakMap(),
    configured: false,
    learners: new Set(),
  };
}

// Blocks and the prompt store decide what each session stores, so they are fixed once sessions exist (no cached
// session misses a template); compaction settings and tool-output limits do not, and may change at any time.
/** The templates, for a builder call allowed only before the first getSession(). */
export function builderOf<M extends SessionMessage>(
  state: ManagerState<M>,
  method: string,
): ManagerTemplates {
  if (state.configured) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${method}() must be called before the first getSession() (it decides what every session stores): create a new SessionManager on the same store with it`,
      { issues: [{ path: method, rule: "conflict" }] },
    );
  }
  return state.templates;
}

/** The cached Session of an id, built with every template on first access. */
export function sessionOf<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionId: string,
  search: (query: string, options?: { limit?: number; owner?: string }) => Promise<SearchHit[]>,
): Session<M> {
  assertNamedSessionId(sessionId);
  let session = state.sessions.get(sessionId);
  if (!session) {
    state.configured = true;
    const history = historyProvider(ownersHistory(state, sessionId, search));
    const view = retirableStore(state.sessionStore, sessionId);
    session = state.templates.apply(Session.create<M>(view.store).forSession(sessionId), history);
    state.sessions.set(sessionId, session);
    state.retirers.set(session, view.retire);
  }
  return session;
}

/**
 * What a session's searchable history searches: its owner's sessions when it has an owner (a model working for
 * one user never reads another's conversations, whether the session came from the owner view or not), else every
 * session. The owner is read on first use (getSession is synchronous) and kept once found: it never changes.
 */
function ownersHistory<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionId: string,
  search: (query: string, options: { limit: number; owner?: string }) => Promise<SearchHit[]>,
) {
  let owner: string | undefined;
  const ownerOf = async () => {
    owner ??= (await state.store.registry.get(sessionId))?.owner;
    return owner;
  };
  return {
    countSessions: async () => {
      const of = await ownerOf();
      return of === undefined
        ? state.store.registry.count()
        : (await state.store.registry.list({ owner: of })).length;
    },
    search: async (query: string, options: { limit: number; context?: number }) => {
      const of = await ownerOf();
      return search(query, of === undefined ? options : { ...options, owner: of });
    },
  };
}

/**
 * Drops the cached Session of an id, closes it and turns off every write through it (its tools' too): a Session
 * held across a delete must not write the deleted session's rows back for a new session with the same id.
 */
export async function retireSession<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionId: string,
): Promise<void> {
  const session = state.sessions.get(sessionId);
  if (!session) return;
  state.sessions.delete(sessionId);
  state.retirers.get(session)?.();
  await session.close();
}

/** The registered row, or `NOT_FOUND`. */
export async function requireSession<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionId: string,
): Promise<SessionInfo> {
  assertNamedSessionId(sessionId);
  return found(sessionId, await state.store.registry.get(sessionId));
}

/** Turns a registry `null` (the id vanished) into `NOT_FOUND`. */
export function found(sessionId: string, info: SessionInfo | null): SessionInfo {
  if (!info) throw new SessionError("NOT_FOUND", `Session "${sessionId}" not found`);
  return info;
}

/** Labels whose rows a session owns: template blocks without a provider, plus blocks its cached Session added. */
export function ownedLabels<M extends SessionMessage>(state: ManagerState<M>, sessionId: string): string[] {
  const labels = new Set(state.templates.autoWiredLabels());
  for (const block of state.sessions.get(sessionId)?.getContextBlocks() ?? []) labels.add(block.label);
  const history = state.templates.historyBlockLabel;
  if (history !== undefined) labels.delete(history);
  return [...labels];
}

/** Every context-block key the session owns (its auto-wired blocks and cached prompt). */
export function blockKeys<M extends SessionMessage>(state: ManagerState<M>, sessionId: string): string[] {
  return sessionBlockKeys(ownedLabels(state, sessionId), sessionId);
}
