import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../src/sqlite/store.js";
import type { SessionStore } from "../src/store/types.js";
import { runProviderContract } from "./contract/index.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-sqlite-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const files = new WeakMap<SessionStore, string>();

runProviderContract({
  name: "sqlite file (better-sqlite3)",
  create: async () => {
    const file = join(dir, `contract-${++counter}.db`);
    const store = new SqliteStore(file);
    files.set(store, file);
    return store;
  },
  reopen: async (store) => {
    const file = files.get(store)!;
    await store.close();
    const again = new SqliteStore(file);
    files.set(again, file);
    return again;
  },
});

runProviderContract({
  name: "sqlite :memory: (better-sqlite3)",
  create: async () => new SqliteStore(":memory:"),
});
