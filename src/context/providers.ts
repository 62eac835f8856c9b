/**
 * The generic providers over a store's context capabilities; each backend's reference-named classes
 * (`src/sqlite/reference.ts`, `src/postgres/reference.ts`) are these over that backend's shared store.
 */

import type { BlockStore, ContextRecord, EntryStore } from "../contract/context.js";
import { SessionError } from "../errors.js";
import { formatEntryHits, type ToolOutputLimits } from "./output.js";
import type { SearchProvider, WritableContextProvider } from "./types.js";

/** How many hits a search block returns, as the reference. */
const SEARCH_HITS = 10;

/** The name (key or label) a provider was given or took from its block; `INVALID_ARGUMENT` at `path` without one. */
function named(name: string | undefined, path: string, refusal: string): string {
  if (name === undefined)
    throw new SessionError("INVALID_ARGUMENT", refusal, { issues: [{ path, rule: "required" }] });
  return name;
}

/**
 * A writable block stored as one row of a {@link BlockStore} under `key` (the block label when omitted). `record`:
 * whose the row is (a session's or an owner's, contract/context.ts ContextRecord), stored with its first write so
 * erasure finds it and tools attribute it by record, not by the key's text.
 */
export class BlockContextProvider implements WritableContextProvider {
  private key: string | undefined;

  constructor(
    private readonly store: BlockStore,
    key?: string,
    private readonly record?: ContextRecord,
  ) {
    this.key = key;
  }

  /** Adopts the block label as the key when none was given. */
  init(label: string): void {
    this.key ??= label;
  }

  private requireKey(): string {
    return named(this.key, "key", "This context provider has no key: pass one or register it as a block");
  }

  async get(): Promise<string | null> {
    return this.store.getBlock(this.requireKey());
  }

  async set(content: string): Promise<void> {
    if (this.record === undefined) await this.store.setBlock(this.requireKey(), content);
    else await this.store.setBlock(this.requireKey(), content, this.record);
  }
}

export { formatEntryHits };

/**
 * A searchable block over an {@link EntryStore}: entries are keyed, indexed for full-text search, per label.
 * `record`: whose its entries are, as a {@link BlockContextProvider}'s block.
 */
export class EntrySearchProvider implements SearchProvider {
  private label: string | undefined;

  constructor(
    private readonly entries: EntryStore,
    label?: string,
    private readonly record?: ContextRecord,
  ) {
    this.label = label;
  }

  /** Takes the block label as the entry namespace. */
  init(label: string): void {
    this.label ??= label;
  }

  private requireLabel(): string {
    return named(this.label, "label", "This search provider has no label: register it as a context block");
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
    if (this.record === undefined) await this.entries.setEntry(this.requireLabel(), key, content);
    else await this.entries.setEntry(this.requireLabel(), key, content, this.record);
  }
}
