import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  FileSessionStorage,
  MemorySessionStorage,
  type SessionStorage,
  SQLiteSessionStorage,
  StoreSessionStorage,
  storeSessionStorage,
} from "../../src/agent/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { runStorageContract } from "../../src/testing/index.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

const root = mkdtempSync(join(tmpdir(), "agent-storage-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const places = new WeakMap<SessionStorage, string>();

runStorageContract(runner, { name: "MemorySessionStorage", create: async () => new MemorySessionStorage() });

runStorageContract(runner, {
  name: "FileSessionStorage",
  create: async () => {
    const dir = join(root, `files-${++counter}`);
    const storage = new FileSessionStorage(dir);
    places.set(storage, dir);
    return storage;
  },
  reopen: async (storage) => new FileSessionStorage(places.get(storage)!),
});

runStorageContract(runner, {
  name: "FileSessionStorage (log folded into the snapshot on every append)",
  create: async () => {
    const dir = join(root, `files-${++counter}`);
    const storage = new FileSessionStorage(dir, { compactLogBytes: 0, fsync: false });
    places.set(storage, dir);
    return storage;
  },
  reopen: async (storage) => new FileSessionStorage(places.get(storage)!),
});

runStorageContract(runner, {
  name: "SQLiteSessionStorage (file)",
  create: async () => {
    const file = join(root, `db-${++counter}.db`);
    const storage = new SQLiteSessionStorage(file);
    places.set(storage, file);
    return storage;
  },
  reopen: async (storage) => new SQLiteSessionStorage(places.get(storage)!),
});

runStorageContract(runner, {
  name: "SQLiteSessionStorage (:memory:)",
  create: async () => new SQLiteSessionStorage(":memory:"),
});

// Any store backs agent sessions as ordinary sessions (the SQL storages above are this over their own store).
runStorageContract(runner, {
  name: "storeSessionStorage(MemoryStore)",
  create: async () => storeSessionStorage(new MemoryStore()),
});

runStorageContract(runner, {
  name: "StoreSessionStorage(SqliteStore file, shared with other storages)",
  create: async () => {
    const file = join(root, `store-${++counter}.db`);
    const storage = new StoreSessionStorage(new SqliteStore(file), { ownsStore: true });
    places.set(storage, file);
    return storage;
  },
  reopen: async (storage) => new SQLiteSessionStorage(places.get(storage)!),
});

/** A user storage with only the four seed methods: sessions must fall back to save(). */
class SeedOnlyStorage implements SessionStorage {
  private readonly inner = new MemorySessionStorage();
  save = this.inner.save.bind(this.inner);
  load = this.inner.load.bind(this.inner);
  delete = this.inner.delete.bind(this.inner);
  list = this.inner.list.bind(this.inner);
}

runStorageContract(runner, { name: "seed-only user storage", create: async () => new SeedOnlyStorage() });
