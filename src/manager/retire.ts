import type { SessionBinding, SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { WRITES } from "./touching-store.js";

// What a Session's context writes: its blocks and cached prompt (`blocks`), its search blocks (`entries`).
const CONTEXT_WRITES: ReadonlySet<string> = new Set([
  "setBlock",
  "deleteBlocks",
  "setEntry",
  "deleteEntries",
]);

/** One managed Session's view of the store and the switch that turns its writes off. */
export interface RetirableStore<S extends SessionStore> {
  readonly store: S;
  retire(): void;
}

/**
 * The store as one managed Session sees it: identical until `retire()` (the manager deleted its session). From
 * then on every write through it — messages, context blocks, entries, also from tools or a provider handed out
 * before — fails with `CLOSED`, so a Session held across the delete cannot write the deleted session's rows back,
 * where a new session with the same id would find them.
 */
export function retirableStore<S extends SessionStore>(store: S, sessionId: string): RetirableStore<S> {
  let retired = false;
  const guard = <T extends object>(target: T, writes: ReadonlySet<string>): T =>
    new Proxy(target, {
      get(inner, property) {
        const value: unknown = Reflect.get(inner, property, inner);
        if (typeof value !== "function") return value;
        if (typeof property !== "string" || !writes.has(property)) return value.bind(inner);
        return async (...args: unknown[]) => {
          if (retired) {
            throw new SessionError("CLOSED", `Session "${sessionId}" was deleted through its SessionManager`);
          }
          return value.apply(inner, args);
        };
      },
    });
  // One guard per sub-store, so `store.blocks === store.blocks` as on the store itself.
  const guarded = new Map<PropertyKey, object>();
  const view = new Proxy(store, {
    get(target, property) {
      if (property === "session") {
        return (id: string, binding?: SessionBinding) => guard(target.session(id, binding), WRITES);
      }
      const value: unknown = Reflect.get(target, property, target);
      if ((property === "blocks" || property === "entries") && typeof value === "object" && value !== null) {
        const sub = guarded.get(property) ?? guard(value, CONTEXT_WRITES);
        guarded.set(property, sub);
        return sub;
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    store: view,
    retire: () => {
      retired = true;
    },
  };
}
