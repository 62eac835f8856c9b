import { SessionError } from "../errors.js";
import { isSqlTagSource, type SqlTagSource } from "../sqlite/driver.js";
import { isSqliteHandle, type SqliteHandle } from "../sqlite/open.js";
import { sharedSqliteStore } from "../sqlite/shared.js";
import {
  type BlockStore,
  type ContextCapableStore,
  type EntryStore,
  hasContextStorage,
  isSessionStore,
  type SessionStore,
} from "../store/types.js";
import { formatEntryHits, type ToolOutputLimits } from "./output.js";
import type { SearchProvider, WritableContextProvider } from "./types.js";

/** Where built-in providers keep their rows: an Agent / `sql`-tag object, a SQLite handle, or a store. */
export type ProviderSource = SqlTagSource | SqliteHandle | SessionStore;

function contextStore(source: ProviderSource): ContextCapableStore {
  if (isSessionStore(source)) {
    if (hasContextStorage(source)) return source;
    throw new SessionError("UNSUPPORTED", `The ${source.backend} store cannot hold context blocks`);
  }
  if (isSqlTagSource(source) || isSqliteHandle(source)) return sharedSqliteStore(source);
  throw new SessionError(
    "INVALID_ARGUMENT",
    "A context provider needs an object with a sql tag, a SQLite handle or a store",
  );
}

/** A writable block stored as one row of a {@link BlockStore} under `key` (the block label when omitted). */
export class BlockContextProvider implements WritableContextProvider {
  private key: string | undefined;

  constructor(
    private readonly store: BlockStore,
    key?: string,
  ) {
    this.key = key;
  }

  /** Adopts the block label as the key when none was given. */
  init(label: string): void {
    this.key ??= label;
  }

  private requireKey(): string {
    if (this.key === undefined) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "This context provider has no key: pass one or register it as a block",
      );
    }
    return this.key;
  }

  async get(): Promise<string | null> {
    return this.store.getBlock(this.requireKey());
  }

  async set(content: string): Promise<void> {
    await this.store.setBlock(this.requireKey(), content);
  }
}

/** The reference's SQLite-backed writable block: `new AgentContextProvider(this, "memory")`. */
export class AgentContextProvider extends BlockContextProvider {
  constructor(source: ProviderSource, label?: string) {
    super(contextStore(source).blocks, label);
  }
}

export { formatEntryHits };

/** A searchable block over an {@link EntryStore}: entries are keyed, indexed for full-text search, per label. */
export class EntrySearchProvider implements SearchProvider {
  private label: string | undefined;

  constructor(
    private readonly entries: EntryStore,
    label?: string,
  ) {
    this.label = label;
  }

  /** Takes the block label as the entry namespace. */
  init(label: string): void {
    this.label ??= label;
  }

  private requireLabel(): string {
    if (this.label === undefined) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "This search provider has no label: register it as a context block",
      );
    }
    return this.label;
  }

  async get(): Promise<string | null> {
    const count = await this.entries.countEntries(this.requireLabel());
    return count === 0 ? null : `${count} entries indexed.`;
  }

  async search(query: string, limits?: ToolOutputLimits): Promise<string | null> {
    return formatEntryHits(await this.entries.searchEntries(this.requireLabel(), query, 10), query, limits);
  }

  async set(key: string, content: string): Promise<void> {
    await this.entries.setEntry(this.requireLabel(), key, content);
  }
}

/** The reference's FTS-backed searchable block: `new AgentSearchProvider(this)`. */
export class AgentSearchProvider extends EntrySearchProvider {
  constructor(source: ProviderSource) {
    super(contextStore(source).entries);
  }
}
