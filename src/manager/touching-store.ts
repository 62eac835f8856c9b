import type { SessionProvider } from "../contract/provider.js";
import type { SessionBinding, SessionStore } from "../contract/store.js";

/** Provider methods that change a session; after each succeeds the session's activity time is bumped. */
export const WRITES: ReadonlySet<string> = new Set([
  "appendMessage",
  "upsertMessage",
  "importMessage",
  "updateMessage",
  "deleteMessages",
  "clearMessages",
  "addCompaction",
]);

/**
 * The store as managed sessions see it: identical, except that every write through a session provider then calls
 * `touch(sessionId)`. Writes made through `manager.getSession(id)` directly — and automatic compaction — therefore
 * move the session up in `list()` just as the manager's own methods do. A Proxy (rather than a copy) keeps every
 * capability the store has, including ones added later, and binds methods to the real store so its state stays
 * in one place.
 */
export function touchingStore<S extends SessionStore>(
  store: S,
  touch: (sessionId: string) => Promise<unknown>,
): S {
  return new Proxy(store, {
    get(target, property) {
      if (property === "session") {
        return (sessionId: string, binding?: SessionBinding) =>
          touchingProvider(target.session(sessionId, binding), () => touch(sessionId));
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function touchingProvider(provider: SessionProvider, touch: () => Promise<unknown>): SessionProvider {
  return new Proxy(provider, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (typeof property !== "string" || !WRITES.has(property)) return value.bind(target);
      return async (...args: unknown[]) => {
        const result: unknown = await value.apply(target, args);
        if (changed(result)) await touch();
        return result;
      };
    },
  });
}

// An append of an id that already existed, or an update of identical content, changed nothing: not activity.
function changed(result: unknown): boolean {
  const { inserted, updated } = (result ?? {}) as { inserted?: unknown; updated?: unknown };
  if (inserted === undefined && updated === undefined) return true;
  return inserted === true || updated === true;
}
