import { type ChangeEvent, hasFeed, type SubscribeOptions } from "../../contract/feed.js";
import type { SessionMessage } from "../../contract/message.js";
import type { SessionStore } from "../../contract/store.js";
import { SessionError } from "../../errors.js";

/** An in-memory copy of one session's active path (overlays applied), kept in step with the change feed. */
export interface SessionMirror {
  /** The active path, oldest first; replaced or changed in place as events arrive. */
  readonly messages: SessionMessage[];
  /** Resolves once the first read is in. */
  readonly ready: Promise<void>;
  /** Stops following the feed. */
  close(): void;
}

/** Options of {@link mirror}. */
export interface MirrorOptions extends Pick<SubscribeOptions, "signal" | "onError"> {
  /** Called after each change was applied. */
  onChange?: (messages: readonly SessionMessage[], event: ChangeEvent | null) => void;
}

/**
 * Follows one session of a store: appends on the active path are pushed, updates replaced in place, anything
 * that reshapes the path (a branch, delete, clear, compaction, import, a reset) re-reads it once.
 */
export async function mirror(
  store: SessionStore,
  sessionId: string,
  options: MirrorOptions = {},
): Promise<SessionMirror> {
  if (!hasFeed(store)) {
    throw new SessionError(
      "UNSUPPORTED",
      `mirror() needs a store with subscribe(); ${store.backend} has none`,
    );
  }
  const provider = store.session(sessionId);
  const messages: SessionMessage[] = [];
  const reload = async (event: ChangeEvent | null) => {
    const fresh = await provider.getHistory();
    messages.splice(0, messages.length, ...fresh);
    options.onChange?.(messages, event);
  };
  // Subscribed first, read once the feed has its starting point: a write lands either in the read or in an event
  // (an event the read already holds is applied harmlessly: a known append is skipped, the rest re-read).
  let live!: () => void;
  const listening = new Promise<void>((resolve) => {
    live = resolve;
  });
  const ready = listening.then(() => reload(null));
  // A first read that failed rejected mirror() itself (and unsubscribed): an event that came meanwhile has
  // nothing to apply to, and the failure was reported once, there.
  const started = ready.then(
    () => true,
    () => false,
  );
  const apply = async (event: ChangeEvent): Promise<void> => {
    if (!(await started)) return;
    if (event.type === "append") {
      if (!event.inserted || messages.some((m) => m.id === event.message.id)) return;
      const last = messages.at(-1)?.id ?? null;
      // Events come in commit order, so an append without a named parent went after the latest leaf: our end.
      const continues = event.parentId === undefined ? event.origin === "local" : event.parentId === last;
      if (!continues) return reload(event);
      messages.push(event.message);
      options.onChange?.(messages, event);
      return;
    }
    if (event.type === "update") {
      const at = messages.findIndex((m) => m.id === event.message.id);
      if (at < 0) return;
      messages[at] = event.message;
      options.onChange?.(messages, event);
      return;
    }
    return reload(event);
  };
  const subscribeOptions: SubscribeOptions = { sessionId, onReady: live };
  if (options.signal) subscribeOptions.signal = options.signal;
  if (options.onError) subscribeOptions.onError = options.onError;
  const close = store.subscribe(apply, subscribeOptions);
  // An already aborted signal subscribes nothing (and never calls onReady): the mirror is then one read.
  if (options.signal?.aborted) live();
  try {
    await ready;
  } catch (error) {
    // The caller gets no close() to call: without this, every later write would reach a dead mirror.
    close();
    throw error;
  }
  return { messages, ready, close };
}
