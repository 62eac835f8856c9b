import type { StreamChunk, StreamStore } from "../contract/streams.js";
import { SessionError } from "../errors.js";
import { utf8Length } from "../runtime/bytes.js";
import { chatMessageId } from "./storage.js";
import type { StreamWake } from "./stream-wake.js";

/** What the writer and the readers of kept streams share (set once by `resumableStreams`). */
export interface StreamSettings {
  store: StreamStore;
  wake: StreamWake;
  maxChunks: number;
  maxBytes: number;
  staleMs: number;
  pollMs: number;
  lingerMs: number;
  /** Where a failure of the writer goes (it runs beside the response, so nobody awaits it). */
  report(error: unknown): void;
}

// Chunks per append: a writer behind the model (a slow database) catches up in few writes.
const BATCH = 500;

/**
 * Keeps the SSE events of one answer in the store while it streams, as the session's stream: appended in order,
 * ended when the answer ends, dropped `lingerMs` later (readers behind read the tail meanwhile). The stream is read
 * to its end whatever happens to the store, so the answer always finishes and is stored by `onFinish`.
 */
export async function keepStream(
  settings: StreamSettings,
  sessionId: string,
  stream: ReadableStream<string>,
): Promise<void> {
  const { store, wake } = settings;
  const streamId = chatMessageId();
  const reader = stream.getReader();
  let seq = 0;
  let bytes = 0;
  // Set once the store is no longer written: a limit, a store failure, or another stream of the session.
  let stopped = false;
  let pending: StreamChunk[] = [];
  let flushing: Promise<void> | null = null;

  const fail = async (error: unknown, text: string) => {
    if (stopped) return;
    stopped = true;
    settings.report(error);
    try {
      await store.end(sessionId, streamId, text, Date.now());
    } catch (endError) {
      settings.report(endError);
    }
    wake.wake(sessionId);
  };
  const flush = async () => {
    while (pending.length > 0 && !stopped) {
      const batch = pending.slice(0, BATCH);
      pending = pending.slice(batch.length);
      try {
        if (!(await store.append(sessionId, streamId, batch, Date.now()))) stopped = true; // replaced or expired
      } catch (error) {
        await fail(error, "The answer could not be kept for a reload: reload when it has finished");
      }
      wake.wake(sessionId);
    }
    flushing = null;
  };
  const schedule = () => {
    flushing ??= flush();
  };
  // A model that thinks for long writes nothing: the heartbeat keeps the stream from looking abandoned.
  const heartbeat = setInterval(
    () => {
      if (!stopped && flushing === null) {
        store.append(sessionId, streamId, [], Date.now()).catch((error: unknown) => settings.report(error));
      }
    },
    Math.max(1, Math.floor(settings.staleMs / 3)),
  );
  unref(heartbeat);

  try {
    await store.start(sessionId, streamId, Date.now());
    wake.wake(sessionId);
    // Streams whose writer died are dropped by the next stream started in the store.
    await store.expire(Date.now() - settings.staleMs);
  } catch (error) {
    await fail(error, "The answer could not be kept for a reload");
  }
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      const chunk = next.value;
      // SSE comments (keep-alives) carry nothing to replay.
      if (stopped || chunk.startsWith(":")) continue;
      bytes += utf8Length(chunk);
      if (seq >= settings.maxChunks || bytes > settings.maxBytes) {
        const limit =
          seq >= settings.maxChunks ? `${settings.maxChunks} chunks` : `${settings.maxBytes} bytes`;
        const error = new SessionError(
          "TOO_LARGE",
          `The answer of session "${sessionId}" is over ${limit} (maxChunks, maxBytes): it is no longer kept for a reload`,
        );
        await flushing;
        await fail(error, "The answer is too long to rejoin: reload when it has finished");
        continue;
      }
      pending.push({ seq: seq++, chunk });
      schedule();
    }
    await flushing;
    if (!stopped) {
      await store.end(sessionId, streamId, null, Date.now());
      wake.wake(sessionId);
    }
  } catch (error) {
    await flushing;
    await fail(error, "The answer failed");
  } finally {
    clearInterval(heartbeat);
    const drop = setTimeout(() => {
      store.drop(sessionId, streamId).catch((error: unknown) => settings.report(error));
    }, settings.lingerMs);
    unref(drop);
  }
}

/** Lets the process exit with the timer pending (Node); a Worker's timers have no `unref`. */
function unref(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}
