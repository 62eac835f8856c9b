import type { StreamHead } from "../contract/streams.js";
import type { StreamSettings } from "./stream-writer.js";

// Chunks per read: a replay of a long answer is a few reads, each of bounded size.
const PAGE = 500;

/** An SSE event the page shows as the stream's error (`useChat`'s `error`). */
export function errorEvent(text: string): string {
  return `data: ${JSON.stringify({ type: "error", errorText: text })}\n\n`;
}

/**
 * The SSE events of a session's kept stream: what was already sent, then the rest as it is written, until the
 * stream ends. A stream that fails, is replaced, or whose writer stops writing for `staleMs` ends with an error
 * event: a reader never ends early without saying so.
 */
export function followStream(
  settings: StreamSettings,
  sessionId: string,
  head: StreamHead,
): ReadableStream<string> {
  const { store, wake } = settings;
  let after = -1;
  let cancelled = false;
  return new ReadableStream<string>(
    {
      async pull(controller) {
        while (!cancelled) {
          const read = await store.read(sessionId, head.streamId, after, PAGE);
          if (read === null) {
            controller.enqueue(errorEvent("The answer ended before it could be read here: reload the page"));
            controller.close();
            return;
          }
          const last = read.chunks[read.chunks.length - 1];
          if (last !== undefined) {
            for (const { chunk } of read.chunks) controller.enqueue(chunk);
            after = last.seq;
            return;
          }
          if (read.state === "done") {
            controller.close();
            return;
          }
          if (read.state === "failed" || Date.now() - read.updatedAt > settings.staleMs) {
            controller.enqueue(errorEvent(read.error ?? "The answer stopped streaming: reload the page"));
            controller.close();
            return;
          }
          await wake.wait(sessionId, settings.pollMs);
        }
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
}
