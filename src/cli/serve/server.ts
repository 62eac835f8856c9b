import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SessionStore } from "../../contract/store.js";
import { parseInput } from "../../schema/parse.js";
import { numberWhere } from "../../schema/rules.js";
import { API_ROUTES, callApi } from "./api.js";
import { DEFAULT_MAX_EVENT_STREAMS, EventStreams, streamEvents } from "./events.js";
import { hostOfHeader, isLoopback } from "./loopback.js";
import { hasSameOriginSignal, isOwnOrigin, SAME_ORIGIN_HEADER } from "./origin.js";
import { renderPage } from "./page.js";

/** Where the viewer listens. */
export interface ViewerOptions {
  /** Interface to bind (default 127.0.0.1: only this machine can connect). */
  host?: string;
  /** Port; 0 picks a free one. */
  port?: number;
  /** Shown in the page header (the database path or masked URL). */
  title?: string;
  /** Live event streams (`/api/events`) served at once (default 32); past it a new one ends the oldest. */
  maxEventStreams?: number;
}

/** A running viewer. */
export interface Viewer {
  url: string;
  close(): Promise<void>;
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, {
    "Content-Type": type,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    ...headers,
  });
  res.end(res.req.method === "HEAD" ? undefined : body);
}

function json(res: ServerResponse, status: number, body: unknown) {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(body));
}

async function handle(
  store: SessionStore,
  options: ViewerOptions,
  streams: EventStreams,
  req: IncomingMessage,
  res: ServerResponse,
) {
  // Bound to loopback (any of 127.0.0.0/8, ::1), a page elsewhere could still reach us through DNS rebinding:
  // accept only Host headers that name a loopback address or localhost.
  const bindsLoopback = isLoopback(options.host ?? "127.0.0.1");
  if (bindsLoopback && !isLoopback(hostOfHeader(req.headers.host))) {
    return json(res, 403, { error: { code: "FORBIDDEN", message: "unexpected Host header" } });
  }
  // Whatever the bind address, a request another page's script made (its Origin is not ours) gets nothing.
  if (!isOwnOrigin(req.headers.origin, req.headers.host)) {
    return json(res, 403, { error: { code: "FORBIDDEN", message: "unexpected Origin header" } });
  }
  // Read-only: no endpoint changes anything, so only GET and HEAD exist.
  if (req.method !== "GET" && req.method !== "HEAD") {
    return send(
      res,
      405,
      "application/json; charset=utf-8",
      JSON.stringify({ error: { code: "METHOD", message: "read-only" } }),
      { Allow: "GET, HEAD" },
    );
  }
  const url = new URL(req.url ?? "/", "http://viewer.local");
  if (url.pathname.startsWith("/api/") && !hasSameOriginSignal(req.headers)) {
    return json(res, 403, {
      error: {
        code: "FORBIDDEN",
        message: `API requests need the ${SAME_ORIGIN_HEADER} header (any value) or a same-origin browser request`,
      },
    });
  }
  if (url.pathname === "/" || url.pathname === "/index.html") {
    // A fresh nonce per page: the inline script and style run, anything injected into the page would not.
    const nonce = randomBytes(16).toString("base64");
    return send(res, 200, "text/html; charset=utf-8", renderPage(nonce, options.title ?? ""), {
      "Content-Security-Policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    });
  }
  // Browsers ask for an icon on their own; an empty answer keeps the console free of 404s.
  if (url.pathname === "/favicon.ico") return send(res, 204, "image/x-icon", "");
  if (url.pathname === "/api/events") return streamEvents(store, streams, url, req, res);
  const name = url.pathname.startsWith("/api/") ? url.pathname.slice(5) : undefined;
  const route = name !== undefined && Object.hasOwn(API_ROUTES, name) ? API_ROUTES[name] : undefined;
  if (!route)
    return json(res, 404, { error: { code: "NOT_FOUND", message: `no such page: ${url.pathname}` } });
  const result = await callApi(route, store, url.searchParams);
  return json(res, result.status, result.body);
}

/** The most open event streams the viewer serves at once: a whole number >= 0. */
const maxEventStreams = numberWhere(
  "maxEventStreams must be a whole number >= 0",
  (n) => Number.isSafeInteger(n) && n >= 0,
).optional();

/** Starts the read-only viewer on `store` and resolves once it listens; `close()` stops it and its connections. */
export async function startViewer(store: SessionStore, options: ViewerOptions = {}): Promise<Viewer> {
  const host = options.host ?? "127.0.0.1";
  const max =
    parseInput(maxEventStreams, options.maxEventStreams, { path: "maxEventStreams" }) ??
    DEFAULT_MAX_EVENT_STREAMS;
  const streams = new EventStreams(max);
  const server = createServer((req, res) => {
    handle(store, options, streams, req, res).catch((error: unknown) => {
      if (!res.headersSent)
        json(res, 500, { error: { code: "INTERNAL", message: (error as Error).message } });
      else res.destroy();
    });
  });
  server.listen(options.port ?? 0, host);
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/`,
    close: async () => {
      const closed = once(server, "close");
      server.close();
      // Keep-alive connections from a browser would otherwise hold close() open.
      server.closeAllConnections();
      await closed;
    },
  };
}
