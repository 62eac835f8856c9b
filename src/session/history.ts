/**
 * Streaming history for `Session`: the provider's windowed reads when it has them, else a slice of `getHistory`
 * (user-written providers), with the abort signal honoured while a read is pending.
 */

import { z } from "zod";
import type { SessionMessage } from "../contract/message.js";
import type {
  HistoryReadOptions,
  RecentHistoryResult,
  SessionProvider,
  Siblings,
} from "../contract/provider.js";
import type { SearchItem, SearchOptions, WithFactHits } from "../contract/search.js";
import { SessionError } from "../errors.js";
import { optionsArg } from "../options-arg.js";
import { ABORTED, untilAborted } from "../runtime/abort.js";
import { utf8Length } from "../runtime/bytes.js";
import { emitWarning } from "../runtime/warn.js";
import { parseInput } from "../schema/parse.js";
import { rule } from "../schema/to-session-error.js";
import { sessionHits } from "../search/hits.js";
import { batchBounds, checkAbort } from "../store/history-stream.js";

/** Options of `Session.getRecentHistory` in object form. */
export interface RecentHistoryOptions {
  /** Keep at least this many newest messages even over the budget (the reference's floor; default 1, the leaf). */
  minRecentMessages?: number | undefined;
  /** Read the path to this message instead of the latest leaf. */
  leafId?: string | null | undefined;
}

const secondArgument = z.custom<number | RecentHistoryOptions | undefined>(
  (second) =>
    second === undefined || typeof second === "number" || (typeof second === "object" && second !== null),
  rule("getRecentHistory's second argument must be a number or an options object", "type"),
);

/** The floor and leaf of `getRecentHistory(max, minRecentMessages | options, leafId)`. */
export function recentArguments(
  second: number | RecentHistoryOptions | undefined,
  leafId: string | null | undefined,
): { minRecent: number | undefined; leafId: string | null | undefined } {
  parseInput(secondArgument, second, { path: "options" });
  if (second === undefined || typeof second === "number") return { minRecent: second, leafId };
  return { minRecent: second.minRecentMessages, leafId: second.leafId ?? leafId };
}

/**
 * `Session.getRecentHistory`: the provider's byte-bounded window, or the whole path from a provider without one
 * (after `warn`, which the Session makes print once).
 */
export function recentHistoryOf<M extends SessionMessage>(
  provider: SessionProvider<M>,
  maxContentBytes: number,
  minRecentMessages: number | RecentHistoryOptions | undefined,
  leafId: string | null | undefined,
  warn: () => void,
): Promise<RecentHistoryResult<M>> {
  const args = recentArguments(minRecentMessages, leafId);
  if (provider.getRecentHistory) {
    return provider.getRecentHistory(args.leafId, maxContentBytes, args.minRecent);
  }
  warn();
  return wholePath(provider, args.leafId);
}

/** The fallback's warning, printed by the returned function on its first call only. */
export function noRecentHistoryWarning(): () => void {
  let warned = false;
  return () => {
    if (warned) return;
    warned = true;
    emitWarning(
      "this SessionProvider has no getRecentHistory; reading the whole path instead",
      "AgentSessionProviderWarning",
    );
  };
}

/**
 * `Session.search`: the provider's full-text search as exact hits (search/hits.ts), 20 unless `limit` says
 * (`UNSUPPORTED` without one).
 */
export async function searchOf<M extends SessionMessage>(
  provider: SessionProvider<M>,
  query: string,
  options: SearchOptions | WithFactHits<SearchOptions>,
  sessionId: string,
): Promise<SearchItem<M>[]> {
  if (!provider.searchMessages) {
    throw new SessionError("UNSUPPORTED", "Session provider does not support search");
  }
  // `facts: "hits"` passes as it came: a built-in store's provider hands it on to its store, which takes it.
  return sessionHits(
    await provider.searchMessages(query, options.limit ?? 20, options as SearchOptions),
    sessionId,
  );
}

/** `Session.getSiblings`: the provider's siblings read (`UNSUPPORTED` without one). */
export function siblingsOf<M extends SessionMessage>(
  provider: SessionProvider<M>,
  messageId: string,
): Promise<Siblings<M> | null> {
  if (!provider.getSiblings) {
    throw new SessionError("UNSUPPORTED", "Session provider does not support getSiblings");
  }
  return provider.getSiblings(messageId);
}

/** getRecentHistory of a provider without it: the whole path with its real byte total (the reference's fallback). */
export async function wholePath<M extends SessionMessage>(
  provider: SessionProvider<M>,
  leafId: string | null | undefined,
): Promise<RecentHistoryResult<M>> {
  const messages = await provider.getHistory(leafId);
  const totalContentBytes = messages.reduce((sum, m) => sum + utf8Length(JSON.stringify(m)), 0);
  return { messages, truncated: false, totalContentBytes };
}

/** Slices a fully read path into bounded batches (providers without `historyBatches`). */
async function* sliced<M extends SessionMessage>(
  provider: SessionProvider<M>,
  options: HistoryReadOptions,
): AsyncGenerator<M[]> {
  const bounds = batchBounds(options);
  checkAbort(options.signal);
  const path = await provider.getHistory(options.leafId);
  checkAbort(options.signal);
  if (options.newestFirst === true) path.reverse();
  let batch: M[] = [];
  let bytes = 0;
  for (const message of path) {
    const size = utf8Length(JSON.stringify(message));
    if (batch.length > 0 && (batch.length >= bounds.rows || bytes + size > bounds.bytes)) {
      yield batch;
      checkAbort(options.signal);
      batch = [];
      bytes = 0;
    }
    batch.push(message);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

/**
 * The path in bounded batches. Aborting rejects a pending `next()` at once with the signal's reason (an
 * AbortError when it has none) and stops the underlying read.
 */
export async function* historyBatchesOf<M extends SessionMessage>(
  provider: SessionProvider<M>,
  given?: HistoryReadOptions | null,
): AsyncGenerator<M[]> {
  const options = optionsArg(given, "history");
  batchBounds(options);
  const { signal } = options;
  const source = provider.historyBatches ? provider.historyBatches(options) : sliced(provider, options);
  const iterator = source[Symbol.asyncIterator]();
  let finished = false;
  let aborted = false;
  try {
    while (true) {
      checkAbort(signal);
      const result = await raceAbort(iterator.next(), signal).catch((error: unknown) => {
        aborted = signal?.aborted === true;
        throw error;
      });
      if (result.done) {
        finished = true;
        return;
      }
      yield result.value;
    }
  } finally {
    // Stops the provider's walk after an early break or an error. After an abort a read may still be pending: the
    // consumer has its rejection already, so the walk is stopped without waiting and its end has no one to go to.
    if (!finished && aborted) iterator.return?.().catch(() => undefined);
    else if (!finished) await iterator.return?.();
  }
}

/** Rejects with the signal's reason as soon as it aborts, whatever `pending` is doing. */
async function raceAbort<T>(pending: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return pending;
  const result = await untilAborted(pending, signal);
  if (result === ABORTED) checkAbort(signal);
  return result as T;
}

/** The path message by message (see {@link historyBatchesOf}). */
export async function* historyOf<M extends SessionMessage>(
  provider: SessionProvider<M>,
  options?: HistoryReadOptions | null,
): AsyncGenerator<M> {
  for await (const batch of historyBatchesOf(provider, options)) yield* batch;
}
