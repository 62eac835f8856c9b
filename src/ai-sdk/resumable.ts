import { z } from "zod";
import type { SessionStore } from "../contract/store.js";
import { hasStreamStore, type StreamStore } from "../contract/streams.js";
import { SessionError } from "../errors.js";
import { emitWarning } from "../runtime/warn.js";
import { parseInput } from "../schema/parse.js";
import { func, wholeAtLeast } from "../schema/rules.js";
import { followStream } from "./stream-reader.js";
import { wakeOf } from "./stream-wake.js";
import { keepStream, type StreamSettings } from "./stream-writer.js";

/** How kept streams are bounded and followed (all optional). */
export interface ResumableStreamsOptions {
  /** The store whose `streams` keep the chunks (a `MemoryStore`, `SqliteStore` or `PostgresStore`). */
  store: SessionStore;
  /** Most SSE events kept per answer (100,000); past it the answer is no longer kept and a reader is told so. */
  maxChunks?: number | undefined;
  /** Most UTF-8 bytes kept per answer (16 MiB); past it, as `maxChunks`. */
  maxBytes?: number | undefined;
  /** A running answer not written for this long (60 s; a heartbeat writes every third of it) lost its writer. */
  staleMs?: number | undefined;
  /** How often a reader looks for new chunks written by another process (250 ms; this process's wake it at once). */
  pollMs?: number | undefined;
  /** How long a finished answer's chunks stay for readers still behind (5 s), then they are dropped. */
  lingerMs?: number | undefined;
  /** Where a failure to keep a stream goes (it runs beside the response); default: an `AgentSessionStreamWarning`. */
  onError?: ((error: unknown) => void) | undefined;
}

const optionsSchema = z.strictObject({
  store: z.custom<SessionStore>((value) => typeof value === "object" && value !== null, {
    error: "store must be a store",
  }),
  maxChunks: wholeAtLeast(1, "maxChunks").optional(),
  maxBytes: wholeAtLeast(1, "maxBytes").optional(),
  staleMs: wholeAtLeast(1, "staleMs").optional(),
  pollMs: wholeAtLeast(1, "pollMs").optional(),
  lingerMs: wholeAtLeast(0, "lingerMs").optional(),
  onError: func<(error: unknown) => void>("onError needs a function").optional(),
});

/** The headers of a UI message stream response (what `toUIMessageStreamResponse` sends). */
const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};

/**
 * Answers a reloaded page can rejoin (`useChat({ resume: true })`) without Redis: give it to `persistChatTurn`
 * (`{ resumable }`) so each streamed answer's SSE events are kept in the store while it runs, and answer the page's
 * `GET /api/chat/:id/stream` with {@link ResumableStreams.response}.
 */
export class ResumableStreams {
  private readonly settings: StreamSettings;

  constructor(options: ResumableStreamsOptions) {
    const parsed = parseInput(optionsSchema, options, { path: "" });
    if (!hasStreamStore(parsed.store)) {
      throw new SessionError(
        "UNSUPPORTED",
        "resumableStreams needs a store with kept streams (store.streams)",
        {
          issues: [{ path: "store", rule: "invalid" }],
        },
      );
    }
    const onError = parsed.onError;
    this.settings = {
      store: parsed.store.streams,
      wake: wakeOf(parsed.store.streams),
      maxChunks: parsed.maxChunks ?? 100_000,
      maxBytes: parsed.maxBytes ?? 16 * 1024 * 1024,
      staleMs: parsed.staleMs ?? 60_000,
      pollMs: parsed.pollMs ?? 250,
      lingerMs: parsed.lingerMs ?? 5_000,
      report: onError ?? ((error) => emitWarning(error, "AgentSessionStreamWarning", "A kept stream failed")),
    };
  }

  /** The store's kept streams (to count what is kept, or to drop a session's stream). */
  get streams(): StreamStore {
    return this.settings.store;
  }

  /**
   * Keeps `stream` (a tee of the SSE response: `toUIMessageStreamResponse`'s `consumeSseStream`) as the session's
   * stream; resolves when it has ended. `persistChatTurn` calls it when given `resumable`.
   */
  keep(sessionId: string, stream: ReadableStream<string>): Promise<void> {
    return keepStream(this.settings, checkedId(sessionId), stream);
  }

  /**
   * The answer to `useChat`'s reconnect (`GET {api}/{id}/stream`): 204 when the session has no running answer,
   * else an SSE response with what was already sent, then the rest as it streams. Open the session as its owner
   * first (`manager.forOwner(user).open(id)`): this reads the stream of whatever id it is given.
   */
  async response(sessionId: string): Promise<Response> {
    const id = checkedId(sessionId);
    const head = await this.settings.store.head(id);
    if (head === null || head.state === "done" || Date.now() - head.updatedAt > this.settings.staleMs) {
      return new Response(null, { status: 204 });
    }
    const body = followStream(this.settings, id, head).pipeThrough(new TextEncoderStream());
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  }
}

/** Answers a reloaded page can rejoin (see {@link ResumableStreams}); make one per process, beside the store. */
export function resumableStreams(options: ResumableStreamsOptions): ResumableStreams {
  return new ResumableStreams(options);
}

function checkedId(sessionId: unknown): string {
  if (typeof sessionId !== "string" || sessionId === "") {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `A session id must be a non-empty string, got ${typeof sessionId}`,
      {
        issues: [{ path: "sessionId", rule: "type" }],
      },
    );
  }
  return sessionId;
}
