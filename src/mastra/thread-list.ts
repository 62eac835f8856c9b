/**
 * Mastra's `listThreads`: a resource's threads (its items, read a page at a time) or every Mastra thread (the
 * registry's sessions of source `"mastra"`), filtered by metadata (each key equal, compared as JSON), ordered and paged.
 */
import type { StorageThreadType } from "@mastra/core/memory";
import type { StorageListThreadsInput, StorageListThreadsOutput } from "@mastra/core/storage";
import type { MastraThreads } from "./threads.js";

const equal = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Answers a `listThreads` (`order` already checked by the storage). */
export async function listThreads(
  threads: MastraThreads,
  args: StorageListThreadsInput,
  order: { field: "createdAt" | "updatedAt"; direction: "ASC" | "DESC" },
): Promise<StorageListThreadsOutput> {
  const { filter, page = 0, perPage: perPageInput } = args;
  const perPage = perPageInput === false ? Number.MAX_SAFE_INTEGER : (perPageInput ?? 100);
  const wanted = Object.entries(filter?.metadata ?? {});
  const all: StorageThreadType[] = [];
  for await (const thread of threads.all(filter?.resourceId)) {
    if (wanted.every(([key, value]) => equal(thread.metadata?.[key], value))) all.push(thread);
  }
  const sign = order.direction === "ASC" ? 1 : -1;
  all.sort(
    (a, b) =>
      sign * (a[order.field].getTime() - b[order.field].getTime()) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const offset = page * perPage;
  return {
    threads: all.slice(offset, offset + perPage),
    total: all.length,
    page,
    perPage: perPageInput === false ? false : perPage,
    hasMore: perPageInput !== false && offset + perPage < all.length,
  };
}
