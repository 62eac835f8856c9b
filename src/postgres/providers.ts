/** The reference's Postgres context providers: a writable block and a searchable block. */
import { formatEntryHits, type ToolOutputLimits } from "../context/output.js";
import type { SearchProvider, WritableContextProvider } from "../context/types.js";
import { SessionError } from "../errors.js";
import type { PostgresSource } from "./client.js";
import type { PostgresStoreOptions } from "./schema.js";
import { sharedPostgresStore } from "./shared.js";
import type { PostgresStore } from "./store.js";

/** How many hits a search block returns, as the reference. */
export const SEARCH_PROVIDER_HITS = 10;

function assertLabel(label: unknown): asserts label is string {
  if (typeof label !== "string" || label.length === 0) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `A block label must be a non-empty string, got ${typeof label}`,
    );
  }
}

/**
 * A writable context block stored as one row keyed by `label` (fixed at construction, as the reference's
 * PostgresContextProvider; there is no `init`).
 */
export class PostgresContextProvider implements WritableContextProvider {
  private readonly store: PostgresStore;

  constructor(
    client: PostgresSource | PostgresStore,
    readonly label: string,
    options: PostgresStoreOptions = {},
  ) {
    assertLabel(label);
    this.store = sharedPostgresStore(client, options);
  }

  /** The stored content, or null when the block was never written. */
  get(): Promise<string | null> {
    return this.store.blocks.getBlock(this.label);
  }

  /** Replaces the block's content. */
  set(content: string): Promise<void> {
    return this.store.blocks.setBlock(this.label, content);
  }
}

/**
 * A searchable block of keyed entries (label from `init`, or the optional constructor argument). `search` uses
 * the library's query language and returns up to 10 hits as `[key]\n<content>` separated by blank lines.
 */
export class PostgresSearchProvider implements SearchProvider {
  private readonly store: PostgresStore;
  private label: string | undefined;

  constructor(client: PostgresSource | PostgresStore, label?: string, options: PostgresStoreOptions = {}) {
    if (label !== undefined) assertLabel(label);
    this.label = label;
    this.store = sharedPostgresStore(client, options);
  }

  /** Receives the block label before the first `get`. */
  init(label: string): void {
    assertLabel(label);
    this.label = label;
  }

  private requireLabel(): string {
    if (this.label === undefined) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "PostgresSearchProvider has no label: call init(label) first",
      );
    }
    return this.label;
  }

  /** `"<n> entries indexed."`, or null when the block holds no entry. */
  async get(): Promise<string | null> {
    const count = await this.store.entries.countEntries(this.requireLabel());
    return count > 0 ? `${count} entries indexed.` : null;
  }

  /**
   * Up to 10 best matches as `[key]\n<content>` joined by blank lines (each hit and the whole within `limits`);
   * `"No results found."` when nothing matches and null for a blank query (the reference's answers).
   */
  async search(query: string, limits?: ToolOutputLimits): Promise<string | null> {
    if (query.trim().length === 0) return null;
    const hits = await this.store.entries.searchEntries(this.requireLabel(), query, SEARCH_PROVIDER_HITS);
    if (hits.length === 0) return "No results found.";
    return formatEntryHits(hits, query, limits);
  }

  /** Inserts or replaces the entry `key`; its old text is no longer found. */
  async set(key: string, content: string): Promise<void> {
    await this.store.entries.setEntry(this.requireLabel(), key, content);
  }
}
