import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { SessionStore } from "../src/contract/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { runProviderContract } from "../src/testing/index.js";
import { pathVariant } from "./helpers/contract-variants.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

const dir = mkdtempSync(join(tmpdir(), "agent-session-sqlite-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const files = new WeakMap<SessionStore, string>();

runProviderContract(runner, {
  name: "sqlite file (better-sqlite3)",
  create: async (policy) => {
    const file = join(dir, `contract-${++counter}.db`);
    const store = new SqliteStore(file, { ...policy, driver: "better-sqlite3" });
    files.set(store, file);
    return store;
  },
  reopen: async (store) => {
    const file = files.get(store)!;
    await store.close();
    const again = new SqliteStore(file, { driver: "better-sqlite3" });
    files.set(again, file);
    return again;
  },
});

pathVariant("sqlite :memory: (better-sqlite3)", () =>
  runProviderContract(runner, {
    name: "sqlite :memory: (better-sqlite3)",
    create: async (policy) => new SqliteStore(":memory:", { ...policy, driver: "better-sqlite3" }),
  }),
);

// Continuation rows on better-sqlite3: a small value limit makes every message over 4 KB split, so the whole
// contract runs through the chunked read and write paths on a local file too.
pathVariant("sqlite file, values split at 4 KB (better-sqlite3)", () =>
  runProviderContract(runner, {
    name: "sqlite file, values split at 4 KB (better-sqlite3)",
    create: async (policy) =>
      new SqliteStore(join(dir, `split-${++counter}.db`), {
        ...policy,
        driver: "better-sqlite3",
        maxValueBytes: 4096,
      }),
  }),
);
