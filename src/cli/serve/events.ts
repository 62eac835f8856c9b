import type { IncomingMessage, ServerResponse } from "node:http";
import { type ChangeEvent, hasFeed } from "../../store/feed.js";
import type { SessionStore } from "../../store/types.js";

/** A comment line this often keeps proxies and the browser from dropping an idle stream. */
const HEARTBEAT_MS = 15_000;

/** What the page needs to know about a write: which session, what kind, and the message id (it re-reads). */
function wire(event: ChangeEvent): string {
  const id =
    event.type === "append" || event.type === "update" || event.type === "import" ? event.message.id : null;
  return JSON.stringify({ type: event.type, sessionId: event.sessionId, id, cursor: event.cursor });
}

/**
 * `GET /api/events?session=<id>` (HEAD: its headers only): server-sent events, one per write to that session (or
 * to any session without the parameter), from the store's change feed. Each frame is small and fixed in shape;
 * the page reads the session again through the ordinary API, so nothing here grows with message size.
 */
export function streamEvents(store: SessionStore, url: URL, req: IncomingMessage, res: ServerResponse): void {
  if (!hasFeed(store)) {
    res.writeHead(501, { "Content-Type": "application/json; charset=utf-8" });
    res.end(JSON.stringify({ error: { code: "UNSUPPORTED", message: "this store has no change feed" } }));
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
  const session = url.searchParams.get("session");
  res.writeHead(200, { ...headers, Connection: "keep-alive" });
  const stop = store.subscribe(
    (event) => {
      res.write(`data: ${wire(event)}\n\n`);
    },
    {
      ...(session === null ? {} : { sessionId: session }),
      // A failed write to the socket means the page went away: stop listening.
      onError: () => close(),
      // The page re-reads the session when the stream opens, so it opens once no later write can be missed.
      onReady: () => {
        if (!res.writableEnded && !res.destroyed) res.write(": connected\n\n");
      },
    },
  );
  const heartbeat = setInterval(() => res.write(": ping\n\n"), HEARTBEAT_MS);
  heartbeat.unref();
  const close = () => {
    clearInterval(heartbeat);
    stop();
  };
  req.on("close", close);
}
