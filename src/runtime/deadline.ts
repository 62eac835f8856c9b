// Time limits and waits for calls to a model or an embedder: one that stops answering must not hold anyone.

/** setTimeout's largest delay (a longer one fires at once). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Runs `call` with a signal that aborts after `ms` (with a `TimeoutError` naming `what`) or when any of `signals`
 * aborts (with its reason), and settles as soon as the signal aborts, whether or not the call heeds it: a callee
 * that ignores the signal is abandoned, not awaited. The deadline keeps the process alive only when `awaited` (a
 * caller waits for it); background work never does.
 */
export async function within<T>(
  ms: number,
  signals: readonly (AbortSignal | undefined)[],
  awaited: boolean,
  what: string,
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
    () => abort(new DOMException(`the ${what} did not answer within ${ms} ms`, "TimeoutError")),
    ms,
  );
  if (!awaited) unref(timer);
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

/** True for a deadline that passed or a call cancelled: the callee's state, never its input's fault. */
export function isAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === "TimeoutError" || name === "AbortError";
}

/** Waits `ms` (between a caller's tries), or rejects when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = () => {
      signal.removeEventListener("abort", stop);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

/** The delay before try `attempt + 1` after `attempt` failed ones: `firstMs`, doubled each time, at most `maxMs`. */
export function backoffMs(firstMs: number, attempt: number, maxMs = Number.POSITIVE_INFINITY): number {
  return Math.min(maxMs, firstMs * 2 ** (attempt - 1));
}

/** Lets a timer fire without keeping the process alive (Node); elsewhere timers never do. */
export function unref(timer: ReturnType<typeof setTimeout>): void {
  (timer as { unref?: () => void }).unref?.();
}
