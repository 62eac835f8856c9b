/** One embedder call with a deadline and cancellation: an embedder that stops answering must not hold anyone. */

/** Default milliseconds a search waits for its query's embedding. */
export const DEFAULT_QUERY_EMBED_TIMEOUT_MS = 5_000;
/** Default milliseconds one embedder call of the background work or backfill may take. */
export const DEFAULT_EMBED_TIMEOUT_MS = 60_000;
/** setTimeout's largest delay (a longer one fires at once). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Runs `call` with a signal that aborts after `ms` (with a `TimeoutError`) or when any of `signals` aborts (with its
 * reason), and settles as soon as the signal aborts, whether or not the call heeds it: an embedder that ignores the
 * signal is abandoned, not awaited. The deadline keeps the process alive only when `awaited` (a caller waits for
 * it); background work never does.
 */
export async function within<T>(
  ms: number,
  signals: readonly (AbortSignal | undefined)[],
  awaited: boolean,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const abort = (reason: unknown) => controller.abort(reason);
  const sources = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  const listeners = sources.map((signal) => {
    const listener = () => abort(signal.reason);
    signal.addEventListener("abort", listener, { once: true });
    return [signal, listener] as const;
  });
  const aborted = sources.find((signal) => signal.aborted);
  if (aborted) abort(aborted.reason);
  const timer = setTimeout(
    () => abort(new DOMException(`the embedder did not answer within ${ms} ms`, "TimeoutError")),
    ms,
  );
  if (!awaited) (timer as { unref?: () => void }).unref?.();
  const signal = controller.signal;
  try {
    if (signal.aborted) throw signal.reason;
    return await new Promise<T>((resolve, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      call(signal).then(resolve, reject);
    });
  } finally {
    clearTimeout(timer);
    for (const [source, listener] of listeners) source.removeEventListener("abort", listener);
  }
}

/** True for a deadline that passed or a call cancelled: the embedder's state, never a text's fault. */
export function isAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === "TimeoutError" || name === "AbortError";
}
