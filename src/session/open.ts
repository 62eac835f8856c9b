import type { SessionProvider } from "../contract/provider.js";
import type { SessionStore } from "../contract/store.js";
import type { SqliteOptions } from "../sql/engines/sqlite/open.js";
import { acquirePathStore } from "../sqlite/shared-path.js";
import { broadcasterOf, StatusFrames } from "./broadcast.js";
import { resolveSource, type SessionSource } from "./source.js";

/** What `Session.create` builds a Session on. */
export interface OpenedSource {
  /** The store or provider the Session wraps. */
  target: SessionStore | SessionProvider;
  /** Gives back storage opened for this Session (closes it, or drops its reference on a shared one). */
  release: (() => Promise<void>) | undefined;
  /** The reference's `cf_agent_session` status frames, for an Agent (a `sql` tag and `broadcast`). */
  frames: StatusFrames | undefined;
}

/** Opens any source `Session.create` accepts; Sessions on the same SQLite path share one connection. */
export function openSource(source: SessionSource, options: SqliteOptions): OpenedSource {
  if (typeof source === "string") {
    // Every Session on the same file shares one connection: servers create one per request.
    const shared = acquirePathStore(source, options);
    return { target: shared.store, release: shared.release, frames: undefined };
  }
  const resolved = resolveSource(source, options);
  const broadcaster = broadcasterOf(source);
  return {
    target: resolved.kind === "store" ? resolved.store : resolved.provider,
    release: resolved.kind === "store" && resolved.owned ? () => resolved.store.close() : undefined,
    frames: broadcaster ? new StatusFrames(broadcaster) : undefined,
  };
}
