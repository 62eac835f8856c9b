/**
 * Threads' and resources' own fields (title, metadata, times, working memory) as the owner's items
 * (the graph store's table, sql/graph-store/): each item is its owner's, sealed under its key, and `eraseOwner` removes
 * them with the rest of the owner's data (docs/MASTRA.md). The thread itself is a session of the registry.
 */
import type { GraphItem, GraphItemDraft } from "../contract/graph-items.js";
import type { SqlGraphItems } from "../sql/graph-store/steps.js";

/** A thread's fields kept beside its session. */
export interface ThreadRecord {
  title?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  createdAt: string;
  updatedAt: string;
}

/** A resource's fields. */
export interface ResourceRecord {
  workingMemory?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  createdAt: string;
  updatedAt: string;
}

const THREADS = "mastra.threads";
const RESOURCES = "mastra.resources";
// Items read per page of an owner's threads.
const PAGE = 256;

const draft = (owner: string, namespace: string, key: string, value: unknown): GraphItemDraft => ({
  owner,
  namespace,
  key,
  value: JSON.stringify(value ?? null),
  fields: "[]",
  ttlMs: null,
});

/** The owner's Mastra records over a store's graph items. */
export class MastraRecords {
  constructor(private readonly items: SqlGraphItems) {}

  async thread(owner: string, threadId: string): Promise<ThreadRecord | null> {
    const item = await this.items.get(owner, THREADS, threadId, Date.now(), false);
    return item ? (JSON.parse(item.value) as ThreadRecord) : null;
  }

  async putThread(owner: string, threadId: string, record: ThreadRecord): Promise<void> {
    await this.items.write([draft(owner, THREADS, threadId, record)], [], Date.now());
  }

  async deleteThread(owner: string, threadId: string): Promise<void> {
    await this.items.write([], [draft(owner, THREADS, threadId, null)], Date.now());
  }

  /** Every thread record of the owner (id and record), read a page at a time. */
  async *threads(owner: string): AsyncGenerator<[string, ThreadRecord]> {
    for (let after: readonly [string, string] | null = null; ; ) {
      const page: GraphItem[] = await this.items.page({ owner, prefix: THREADS }, after, Date.now(), PAGE);
      for (const item of page) if (item.namespace === THREADS) yield [item.key, JSON.parse(item.value)];
      const last = page.at(-1);
      if (!last || page.length < PAGE) return;
      after = [last.namespace, last.key];
    }
  }

  async resource(owner: string): Promise<ResourceRecord | null> {
    const item = await this.items.get(owner, RESOURCES, owner, Date.now(), false);
    return item ? (JSON.parse(item.value) as ResourceRecord) : null;
  }

  async putResource(owner: string, record: ResourceRecord): Promise<void> {
    await this.items.write([draft(owner, RESOURCES, owner, record)], [], Date.now());
  }
}
