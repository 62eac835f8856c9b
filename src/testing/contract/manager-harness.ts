import { hasSessionRegistry, type RegistryCapableStore } from "../../contract/registry.js";
import type { WritePolicyOptions } from "../../contract/store.js";
import { SessionManager } from "../../manager/manager.js";
import type { ContractTest } from "../runner.js";
import { type ContractTarget, withStore } from "./harness.js";

// A backend without a registry yet (e.g. Postgres before it implements one) skips these specs instead of failing;
// a backend that has `store.registry` must pass all of them.
const NO_REGISTRY = "this store has no session registry (store.registry) yet";

/** Runs `body` with a fresh store that has a session registry; skips the test when the backend has none. */
export function withRegistryStore(
  t: ContractTest,
  target: ContractTarget,
  body: (store: RegistryCapableStore) => Promise<void>,
  policy?: WritePolicyOptions,
): Promise<void> {
  return withStore(
    target,
    async (store) => {
      if (!hasSessionRegistry(store)) {
        t.skip(NO_REGISTRY);
        return;
      }
      await body(store);
    },
    policy,
  );
}

/** Runs `body` with a SessionManager over a fresh store (skipped without a registry); `policy`: the store's. */
export function withManager(
  t: ContractTest,
  target: ContractTarget,
  body: (manager: SessionManager, store: RegistryCapableStore) => Promise<void>,
  policy?: WritePolicyOptions,
): Promise<void> {
  return withRegistryStore(t, target, (store) => body(SessionManager.create(store), store), policy);
}

/** Resolves after at least `ms` milliseconds, so two writes get different timestamps. */
export function tick(ms = 2): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** True for an ISO-8601 timestamp as `Date.prototype.toISOString` writes it. */
export function isIso(value: unknown): boolean {
  return typeof value === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value);
}
