import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { SessionStore } from "../src/contract/store.js";
import type { SqliteOptions } from "../src/sql/engines/sqlite/open.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { runProviderContract } from "../src/testing/index.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

function nodeSqliteAvailable(): boolean {
  try {
    createRequire(import.meta.url)("node:sqlite");
    return true;
  } catch {
    return false;
  }
}

if (!nodeSqliteAvailable()) {
  const reason = `node:sqlite needs Node.js >= 22.13 (running ${process.version}); .ci/run covers it under Node 24`;
  console.log(`# skipping node:sqlite contract: ${reason}`);
  describe("node:sqlite: storage contract", { skip: reason }, () => {});
} else {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-node-sqlite-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  let counter = 0;
  const files = new WeakMap<SessionStore, string>();
  const open = (file: string, policy: SqliteOptions = {}) => {
    const store = new SqliteStore(file, { ...policy, driver: "node:sqlite" });
    files.set(store, file);
    return store;
  };
  runProviderContract(runner, {
    name: "sqlite file (node:sqlite)",
    create: async (policy) => open(join(dir, `contract-${++counter}.db`), policy),
    reopen: async (store) => {
      await store.close();
      return open(files.get(store)!);
    },
  });
  runProviderContract(runner, {
    name: "sqlite :memory: (node:sqlite)",
    create: async (policy) => new SqliteStore(":memory:", { ...policy, driver: "node:sqlite" }),
  });
}
