/** What {@link untilAborted} resolves to when the signal aborts first. */
export const ABORTED: unique symbol = Symbol("aborted");

/**
 * `promise`'s outcome, or {@link ABORTED} as soon as `signal` aborts (at once if it already has), whatever the
 * promise is still doing; the listener is removed when the promise settles first.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
