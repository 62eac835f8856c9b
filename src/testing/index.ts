/**
 * `agent-session/testing`: the contract suites this package's own backends pass, for checking your own.
 *
 * - {@link runProviderContract}: a `SessionStore` (its per-session `SessionProvider`s and whatever optional
 *   capabilities it has: registry, context rows, transfer, change feed).
 * - {@link runStorageContract}: an agent runtime `SessionStorage` (`agent-session/agent`).
 * - {@link runPrivacyContract}: a store that writes to disk: every erasure path, then `purge()`, leaves no trace
 *   of the erased session that the target finds in its storage (file bytes, pages, statistics).
 * - {@link runKeylessContract}: a store with encryption at rest: one opened without an encrypted owner's key
 *   refuses every write of the owner's content (`DECRYPT_FAILED`) and writes nothing of it in clear; with the key,
 *   no id or hash in the storage is an unkeyed digest of the owner's content (keyed-ids.ts).
 *
 * All take the test runner's `{ describe, it }` first (node:test, vitest, jest, mocha), so the suite runs in
 * yours; they assert with `node:assert/strict`. A capability your backend lacks skips its tests with the reason.
 *
 * ```ts
 * import { describe, it } from "node:test"; // or from "vitest", or jest's globals
 * import { runProviderContract } from "agent-session/testing";
 *
 * runProviderContract({ describe, it }, { name: "my store", create: async (policy) => new MyStore(policy) });
 * ```
 */

export { type ContractTarget, runProviderContract } from "./contract/index.js";
export {
  type PrivacyInstance,
  type PrivacyStore,
  type PrivacyStoreOptions,
  type PrivacyTarget,
  runPrivacyContract,
} from "./privacy/contract.js";
export {
  type KeylessInstance,
  type KeylessTarget,
  runKeylessContract,
} from "./privacy/keyless.js";
export type { CountedTable } from "./privacy/tables.js";
export type { ContractTest, TestApi } from "./runner.js";
export { runStorageContract, type StorageTarget } from "./storage/contract.js";
