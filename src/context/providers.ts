/**
 * The generic providers over a store's context capabilities; each backend's reference-named classes
 * (`src/sqlite/reference.ts`, `src/postgres/reference.ts`) are these over that backend's shared store.
 */

import type { BlockStore, EntryStore } from "../contract/context.js";
import { SessionError } from "../errors.js";
import { formatEntryHits, type ToolOutputLimits } from "./output.js";
import type { SearchProvider, WritableContextProvider } from "./types.js";

/** How many hits a search block returns, as the reference. */
const SEARCH_HITS = 10;

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
        { issues: [{ path: "key", rule: "required" }] },
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
        { issues: [{ path: "label", rule: "required" }] },
      );
    }
    return this.label;
  }

  async get(): Promise<string | null> {
    const count = await this.entries.countEntries(this.requireLabel());
    return count === 0 ? null : `${count} entries indexed.`;
  }

  async search(query: string, limits?: ToolOutputLimits): Promise<string | null> {
    return formatEntryHits(
      await this.entries.searchEntries(this.requireLabel(), query, SEARCH_HITS),
      query,
      limits,
    );
  }

  async set(key: string, content: string): Promise<void> {
    await this.entries.setEntry(this.requireLabel(), key, content);
  }
}
