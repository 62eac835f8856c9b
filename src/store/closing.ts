/**
 * Background work a door started on a store (the learning of a chat's `learn` option), stopped by the store's own
 * `close()` before anything of the store closes: the work is cancelled and awaited, so it never meets a closed
 * store (it used to warn "This SqliteStore was closed"), and what it left undone is the next learner's.
 */

/** Work that stops on request: aborts what is in flight and resolves once it has stopped. */
export interface StoppableWork {
  close(): Promise<void>;
}

const started = new WeakMap<object, Set<StoppableWork>>();

/** Registers `work` to be stopped when `store` closes; the answer unregisters it (the work ended on its own). */
export function stopOnClose(store: object, work: StoppableWork): () => void {
  let works = started.get(store);
  if (works === undefined) {
    works = new Set();
    started.set(store, works);
  }
  works.add(work);
  const set = works;
  return () => void set.delete(work);
}

/** Stops every work registered on `store` and waits for each; called first by the store's `close()`. */
export async function stopStarted(store: object): Promise<void> {
  const works = started.get(store);
  if (works === undefined) return;
  started.delete(store);
  await Promise.all([...works].map((work) => work.close()));
}
