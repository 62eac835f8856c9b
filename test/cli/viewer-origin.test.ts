// The viewer's request checks: HEAD /api/events answers at once without subscribing, a foreign Origin is refused, and a Host
// header with text after an IPv6 literal is not taken for a loopback name.
import assert from "node:assert/strict";
import { request } from "node:http";
import { describe, test } from "node:test";
import { hostOfHeader } from "../../src/cli/serve/loopback.js";
import { startViewer, type Viewer } from "../../src/cli/serve/server.js";
import { MemoryStore } from "../../src/memory/store.js";

interface Answer {
  status: number | undefined;
  headers: Record<string, string | string[] | undefined>;
}

/** One request with raw headers; fails (rather than hangs) when no response head arrives within `ms`. */
function ask(url: string, options: { method?: string; headers?: Record<string, string> }, ms = 3_000) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      res.resume();
      resolve({ status: res.statusCode, headers: res.headers });
      req.destroy();
    });
    req.setTimeout(ms, () => {
      req.destroy();
      reject(new Error(`no answer to ${options.method ?? "GET"} ${url} within ${ms} ms`));
    });
    req.on("error", (error) => {
      if (!req.destroyed || error.message !== "socket hang up") reject(error);
    });
    req.end();
  });
}

/** The header the viewer's page (or a tool) sends on API requests. */
const TOOL = { "X-Agent-Session-Viewer": "1" };

async function withViewer(body: (viewer: Viewer, store: MemoryStore) => Promise<void>): Promise<void> {
  const store = new MemoryStore();
  const viewer = await startViewer(store, { port: 0 });
  try {
    await body(viewer, store);
  } finally {
    await viewer.close();
    await store.close();
  }
}

describe("viewer request checks", () => {
  test("HEAD /api/events answers at once with the stream's headers and subscribes nothing", async () => {
    await withViewer(async (viewer, store) => {
      let subscriptions = 0;
      const subscribe = store.subscribe.bind(store);
      store.subscribe = (...args) => {
        subscriptions++;
        return subscribe(...args);
      };
      const head = await ask(`${viewer.url}api/events?session=s`, { method: "HEAD", headers: TOOL });
      assert.equal(head.status, 200);
      assert.match(String(head.headers["content-type"]), /^text\/event-stream/);
      assert.equal(subscriptions, 0, "a HEAD holds no subscription");
      assert.equal(store.feed.idle, true);
    });
  });

  test("a request whose Origin is not the viewer's own is refused; no Origin, or its own, is served", async () => {
    await withViewer(async (viewer) => {
      const own = new URL(viewer.url).origin;
      const api = `${viewer.url}api/sessions`;
      assert.equal((await ask(api, { headers: { Origin: "http://evil.example" } })).status, 403);
      assert.equal((await ask(api, { headers: { Origin: "null" } })).status, 403);
      assert.equal(
        (await ask(`${viewer.url}api/events`, { headers: { Origin: "http://evil.example" } })).status,
        403,
      );
      // Same host, other port or scheme: another origin.
      const port = Number(new URL(viewer.url).port);
      assert.equal((await ask(api, { headers: { Origin: `http://127.0.0.1:${port + 1}` } })).status, 403);
      assert.equal((await ask(api, { headers: { Origin: `https://127.0.0.1:${port}` } })).status, 403);
      assert.equal((await ask(api, { headers: { Origin: own, ...TOOL } })).status, 200);
      assert.equal((await ask(api, { headers: TOOL })).status, 200);
      // The page through another loopback name: its origin is the Host it was loaded from.
      const local = { Host: `localhost:${port}`, Origin: `http://localhost:${port}`, ...TOOL };
      assert.equal((await ask(api, { headers: local })).status, 200);
    });
  });

  test("an API request without a same-origin signal (an <img>, <script> or no-cors fetch elsewhere) is refused", async () => {
    await withViewer(async (viewer) => {
      for (const path of ["api/sessions", "api/search?q=x", "api/events?session=s"]) {
        const url = `${viewer.url}${path}`;
        // What a browser sends for another page's <img>/<script>/no-cors GET: no Origin, a cross-site fetch.
        assert.equal((await ask(url, { headers: { "Sec-Fetch-Site": "cross-site" } })).status, 403, path);
        assert.equal((await ask(url, { headers: { "Sec-Fetch-Site": "same-site" } })).status, 403, path);
        // Neither signal (an old browser's no-cors request, or a tool that forgot the header).
        assert.equal((await ask(url, {})).status, 403, path);
        // The page's own EventSource (no custom header possible) and its fetches; a tool with the header.
        assert.equal((await ask(url, { headers: { "Sec-Fetch-Site": "same-origin" } })).status, 200, path);
        assert.equal((await ask(url, { headers: TOOL })).status, 200, path);
      }
      // The page itself needs no signal: it is what a person opens.
      assert.equal((await ask(viewer.url, {})).status, 200);
    });
  });

  test("a Host header with text after an IPv6 literal is refused", async () => {
    assert.equal(hostOfHeader("[::1]evil.com"), "");
    assert.equal(hostOfHeader("[::1]evil.com:80"), "");
    assert.equal(hostOfHeader("127.0.0.1:80evil"), "");
    assert.equal(hostOfHeader("[::1]:8080"), "[::1]");
    assert.equal(hostOfHeader("[::1]"), "[::1]");
    assert.equal(hostOfHeader("localhost:4646"), "localhost");
    await withViewer(async (viewer) => {
      const api = `${viewer.url}api/sessions`;
      assert.equal((await ask(api, { headers: { Host: "[::1]evil.com" } })).status, 403);
      assert.equal((await ask(api, { headers: { Host: "[::1]", ...TOOL } })).status, 200);
    });
  });
});
