import { nodeBuiltin } from "../runtime/load.js";
import type { SqliteOptions } from "../sql/engines/sqlite/open.js";
import { SqliteStore } from "./store.js";

interface SharedEntry {
  store: SqliteStore;
  users: number;
}

// One connection per file and options, however many Sessions a server creates on the path: a connection per
// request used two file descriptors (database and WAL) and was never closed unless every Session was.
const entries = new Map<string, SharedEntry>();

/** A store shared by every user of the same SQLite file and options; `release` closes it after the last user. */
export interface SharedPathStore {
  store: SqliteStore;
  release(): Promise<void>;
}

/** Takes a reference on the shared store of `path` (opened on first use; `:memory:` is never shared). */
export function acquirePathStore(path: string, options: SqliteOptions = {}): SharedPathStore {
  if (path === ":memory:" || path === "") {
    const store = new SqliteStore(path, options);
    return { store, release: () => store.close() };
  }
  // node:path on first use, not at import; a path only opens on Node (the driver refuses it elsewhere).
  const absolute = nodeBuiltin<typeof import("node:path")>("node:path")?.resolve(path) ?? path;
  const key = `${absolute}\0${optionsKey(options)}`;
  let entry = entries.get(key);
  if (!entry) {
    entry = { store: new SqliteStore(path, options), users: 0 };
    entries.set(key, entry);
  }
  entry.users++;
  const taken = entry;
  let released = false;
  return {
    store: taken.store,
    release: async () => {
      if (released) return;
      released = true;
      taken.users--;
      if (taken.users > 0) return;
      if (entries.get(key) === taken) entries.delete(key);
      await taken.store.close();
    },
  };
}

/** How many distinct files and option sets have a shared store open (for tests and diagnostics). */
export function openPathStores(): number {
  return entries.size;
}

function optionsKey(options: SqliteOptions): string {
  return JSON.stringify([
    options.driver,
    options.durability,
    options.busyTimeoutMs,
    options.maxValueBytes,
    options.pageCacheMiB,
  ]);
}
