import type { IncomingMessage, ServerResponse } from "node:http";
import { type ChangeEvent, hasFeed } from "../../contract/feed.js";
import type { SessionStore } from "../../contract/store.js";
import { requireSession } from "../inspect/sessions.js";
import { ownerParam } from "./params.js";

/** A comment line this often keeps proxies and the browser from dropping an idle stream. */
const HEARTBEAT_MS = 15_000;
/** Event streams one viewer serves at once by default (`ViewerOptions.maxEventStreams`). */
export const DEFAULT_MAX_EVENT_STREAMS = 32;
/**
 * Bytes a stream may have waiting for its reader before events are dropped for it. A frame is ~120 bytes, so a
 * reader that keeps up never gets near it; one that stops reading costs at most this much (plus the socket's).
 */
const BUFFERED_BYTES = 64 * 1024;
/** A reader that has not taken its waiting bytes for this long is disconnected (its slot is freed). */
const STALLED_MS = 30_000;

/** What the page needs to know about a write: which session, what kind, and the message id (it re-reads). */
function wire(event: ChangeEvent): string {
  const id =
    event.type === "append" || event.type === "update" || event.type === "import" ? event.message.id : null;
  return JSON.stringify({ type: event.type, sessionId: event.sessionId, id, cursor: event.cursor });
}

/** How long an ended stream's `EventSource` waits before it reconnects (the SSE `retry` field), in ms. */
const RECONNECT_MS = 5_000;

/**
 * The open event streams of one viewer, capped: the cap bounds what streams can hold, whatever writes arrive. A
 * new stream past the cap ends the oldest one, so streams left open by others (idle tabs, scripts) can never lock
 * a page out of live updates: the page's `EventSource` reconnects and re-reads the session.
 */
export class EventStreams {
  /** Each open stream's way to end it, oldest first (a Set keeps insertion order). */
  private readonly open = new Set<() => void>();

  constructor(readonly max = DEFAULT_MAX_EVENT_STREAMS) {}

  /** Takes a slot for a stream that `end` ends, ending the oldest streams to make room; false when max is 0. */
  take(end: () => void): boolean {
    if (this.max === 0) return false;
    for (const oldest of this.open) {
      if (this.open.size < this.max) break;
      this.open.delete(oldest);
      oldest();
    }
    this.open.add(end);
    return true;
  }

  /** Frees the slot of a stream that closed (again: nothing). */
  release(end: () => void): void {
    this.open.delete(end);
  }
}

/**
 * Why a stream with `owner` is refused, or undefined: a bad owner id (400), no `session` (400: frames of every
 * session would name other owners' sessions), or a session that is not that owner's (404, as on the other routes).
 */
async function ownerRefusal(
  store: SessionStore,
  query: URLSearchParams,
): Promise<{ status: 400 | 404; code: string; message: string } | undefined> {
  try {
    const owner = ownerParam(query);
    if (owner === undefined) return undefined;
    const session = query.get("session");
    if (session === null) {
      return { status: 400, code: "INVALID_ARGUMENT", message: `the "owner" parameter needs "session" here` };
    }
    await requireSession(store, session, owner);
    return undefined;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "INVALID_ARGUMENT") return { status: 400, code, message: (error as Error).message };
    if (code === "NOT_FOUND") return { status: 404, code, message: (error as Error).message };
    throw error;
  }
}

/**
 * `GET /api/events?session=<id>` (HEAD: its headers only): server-sent events, one per write to that session (or
 * to any session without the parameter; with `owner`, the session must be that owner's), from the store's change
 * feed. Each frame is small and fixed in shape;
 * the page reads the session again through the ordinary API, so nothing here grows with message size. At most
 * `streams.max` are open at once (a new one past it ends the oldest). A reader that falls behind (its unread bytes pass
 * BUFFERED_BYTES) gets no more frames until it has caught up, then one `reset` frame standing for those it missed
 * (the page re-reads on any frame); one that stays behind for STALLED_MS is disconnected.
 */
export async function streamEvents(
  store: SessionStore,
  streams: EventStreams,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const answer = (status: number, code: string, message: string) => {
    res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
    res.end(JSON.stringify({ error: { code, message } }));
  };
  if (!hasFeed(store)) {
    answer(501, "UNSUPPORTED", "this store has no change feed");
    return;
  }
  const refused = await ownerRefusal(store, url.searchParams);
  if (refused) {
    answer(refused.status, refused.code, refused.message);
    return;
  }
  const headers = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  };
  // HEAD: the headers alone, at once. Node sends no body for it, so a stream's writes would never flush the
  // headers, and its subscription would stay open until the client gave up.
  if (req.method === "HEAD") {
    res.writeHead(200, headers);
    res.end();
    return;
  }
  let closed = false;
  let stop: (() => void) | undefined;
  let behind = false;
  let stalled: ReturnType<typeof setTimeout> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    clearTimeout(stalled);
    stop?.();
    streams.release(end);
  };
  // A newer stream took this slot: say why and when to come back (EventSource reconnects then, and the page
  // re-reads on reopen); a reader that is behind cannot take even that, so its socket goes at once.
  const end = () => {
    close();
    if (res.writableEnded || res.destroyed) return;
    if (behind) res.destroy();
    else
      res.end(`: a newer stream took this one's place (at most ${streams.max})\nretry: ${RECONNECT_MS}\n\n`);
  };
  if (!streams.take(end)) {
    answer(503, "TOO_MANY_STREAMS", "this viewer serves no event streams (maxEventStreams is 0)");
    return;
  }
  const session = url.searchParams.get("session");
  res.writeHead(200, { ...headers, Connection: "keep-alive" });
  const send = (frame: string) => {
    if (res.writableEnded || res.destroyed) return;
    if (behind || res.writableLength > BUFFERED_BYTES) {
      // Dropped: the frame sent on 'drain' makes the page re-read everything it missed.
      if (!behind) {
        behind = true;
        stalled = setTimeout(() => res.destroy(), STALLED_MS);
        stalled.unref();
      }
      return;
    }
    res.write(frame);
  };
  res.on("drain", () => {
    if (!behind) return;
    behind = false;
    clearTimeout(stalled);
    const missed = { type: "reset", sessionId: session ?? "", id: null, cursor: null };
    res.write(`data: ${JSON.stringify(missed)}\n\n`);
  });
  stop = store.subscribe((event) => send(`data: ${wire(event)}\n\n`), {
    ...(session === null ? {} : { sessionId: session }),
    // A failed write to the socket means the page went away: stop listening.
    onError: () => close(),
    // The page re-reads the session when the stream opens, so it opens once no later write can be missed.
    onReady: () => send(": connected\n\n"),
  });
  heartbeat = setInterval(() => send(": ping\n\n"), HEARTBEAT_MS);
  heartbeat.unref();
  req.on("close", close);
  res.on("close", close);
}
