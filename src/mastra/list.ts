/**
 * Mastra's `listMessages`: a page of threads' messages in the caller's time order, a date range, and `include`
 * windows around chosen messages, read from the timed-message indexes (a page reads its ids and then those messages
 * only). A thread of another resource than the one asked for, and an `include` in another owner's thread, read as
 * nothing.
 */
import type { MastraDBMessage } from "@mastra/core/memory";
import type { StorageListMessagesInput, StorageListMessagesOutput } from "@mastra/core/storage";
import { SessionError } from "../errors.js";
import type { TimedMessages } from "../sql/timed-messages/reads.js";
import type { LocatedMessage, TimeBound, TimedScope } from "../sql/timed-messages/statements.js";
import { userError } from "./errors.js";
import type { MastraMessages } from "./message-store.js";
import { mastraMessageOf } from "./messages.js";
import { MASTRA_SOURCE } from "./threads.js";

const iso = (value: Date | string): string => (value instanceof Date ? value : new Date(value)).toISOString();

function bound(at: Date | string | undefined, exclusive: boolean | undefined): TimeBound | undefined {
  return at === undefined || at === null ? undefined : { at: iso(at), exclusive: exclusive === true };
}

const time = (m: MastraDBMessage) => new Date(m.createdAt).getTime();

/** Answers a `listMessages` (or, with `resourceOnly`, a `listMessagesByResourceId`) over the store. */
export async function listMessages(
  timed: TimedMessages,
  messages: MastraMessages,
  args: StorageListMessagesInput,
  threadIds: readonly string[],
): Promise<StorageListMessagesOutput> {
  const { resourceId, include, filter, perPage: perPageInput, page = 0, orderBy } = args;
  if (!Number.isInteger(page) || page < 0)
    throw userError("LIST_MESSAGES_INVALID_PAGE", "page must be >= 0", { page });
  if (
    perPageInput !== undefined &&
    perPageInput !== false &&
    (!Number.isInteger(perPageInput) || perPageInput < 0)
  )
    throw userError("LIST_MESSAGES_INVALID_PER_PAGE", "perPage must be false or an integer >= 0");
  if (perPageInput === false && page !== 0)
    throw userError("LIST_MESSAGES_INVALID_PAGE", "page must be 0 when perPage is false", { page });
  if (filter?.metadata !== undefined && Object.keys(filter.metadata).length > 0) {
    // A message's metadata lives in its content, which may be sealed: no index can page by it (docs/MASTRA.md).
    throw new SessionError(
      "UNSUPPORTED",
      "listMessages by message metadata is not supported on agent-session",
    );
  }
  const perPage = perPageInput === false ? Number.MAX_SAFE_INTEGER : (perPageInput ?? 40);
  const descending = orderBy?.direction === "DESC";
  const start = bound(filter?.dateRange?.start, filter?.dateRange?.startExclusive);
  const end = bound(filter?.dateRange?.end, filter?.dateRange?.endExclusive);
  const offset = page * perPage;
  const limit = perPage === 0 ? 0 : perPage;
  // One statement where the engine has it (the threads' owners, the count and the page's messages); else the
  // threads' registry rows, the count, the page's ids and then its messages.
  const source = MASTRA_SOURCE;
  const one = await timed.list(
    { sessionIds: threadIds, start, end, source, owner: resourceId },
    descending,
    limit,
    offset,
  );
  let owners: Map<string, string>;
  let total: number;
  let located: LocatedMessage[];
  const found: MastraDBMessage[] = [];
  if (one) {
    owners = one.owners;
    total = perPage === 0 ? 0 : one.total;
    located = one.rows.map((row) => row.at);
    for (const row of one.rows) found.push(mastraMessageOf(row.message, row.at.sessionId, row.owner));
  } else {
    owners = await messages.ownersOf(threadIds);
    for (const [id, owner] of owners) if (resourceId !== undefined && owner !== resourceId) owners.delete(id);
    const scope: TimedScope = { sessionIds: [...owners.keys()], start, end };
    total = perPage === 0 ? 0 : await timed.count(scope);
    located = perPage === 0 ? [] : await timed.page(scope, descending, perPage, offset);
    found.push(...(await messages.read(located, owners)));
  }
  const seen = new Set(located.map((m) => m.id));
  const listed = located.length;
  const allowed = resourceId !== undefined ? new Set([resourceId]) : new Set(owners.values());
  const extras: LocatedMessage[] = [];
  for (const extra of await includeWindows(timed, messages, include ?? [], allowed)) {
    if (seen.has(extra.id)) continue;
    seen.add(extra.id);
    extras.push(extra);
  }
  if (extras.length > 0)
    found.push(...(await messages.read(extras, await messages.ownersOf(extras.map((m) => m.sessionId)))));
  found.sort((a, b) => (descending ? time(b) - time(a) : time(a) - time(b)));
  return {
    messages: found,
    total,
    page,
    perPage: perPageInput === false ? false : perPage,
    hasMore: perPageInput !== false && perPage > 0 && offset + listed < total,
  };
}

// The messages `include` asks for: each target with up to `withPreviousMessages` before it and `withNextMessages`
// after it in its thread, for targets in a thread of an allowed owner (the resource asked for, or the threads' owners).
async function includeWindows(
  timed: TimedMessages,
  messages: MastraMessages,
  include: NonNullable<StorageListMessagesInput["include"]>,
  allowed: Set<string>,
): Promise<LocatedMessage[]> {
  if (include.length === 0) return [];
  const targets = await timed.locate(include.map((i) => i.id));
  const owners = await messages.ownersOf(targets.map((t) => t.sessionId));
  const out: LocatedMessage[] = [];
  for (const item of include) {
    for (const target of targets) {
      if (target.id !== item.id) continue;
      const owner = owners.get(target.sessionId);
      if (owner === undefined || !allowed.has(owner)) continue;
      out.push(...(await timed.window(target, item.withPreviousMessages ?? 0, item.withNextMessages ?? 0)));
    }
  }
  return out;
}
