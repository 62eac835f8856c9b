import type { SessionStore } from "../store/types.js";
import type { AppendResult, SessionProvider } from "../types.js";

/** Provider methods that change a session; after each succeeds the session's activity time is bumped. */
const WRITES = new Set([
  "appendMessage",
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
        return (sessionId: string) => touchingProvider(target.session(sessionId), () => touch(sessionId));
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
        // An append of an id that already existed changed nothing, so it is not activity.
        if ((result as AppendResult | undefined)?.inserted !== false) await touch();
        return result;
      };
    },
  });
}
