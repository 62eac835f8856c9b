// The viewer's event streams are capped and bounded: past `maxEventStreams` a new stream ends the oldest, and a
// reader that stops reading gets frames dropped (then one `reset` frame) instead of an ever-growing buffer, while
// the API stays responsive. Loopback only, bounded loops (issue 32).
import assert from "node:assert/strict";
import { type ClientRequest, type IncomingMessage, request } from "node:http";
import { describe, test } from "node:test";
import { startViewer } from "../../src/cli/serve/server.js";
import { MemoryStore } from "../../src/memory/store.js";

const OWN = { "X-Agent-Session-Viewer": "1" };

/** Opens a request and resolves with its response head (the body is left unread). */
function open(
  url: string,
  headers: Record<string, string> = OWN,
): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => resolve({ req, res }));
    req.on("error", reject);
    req.setTimeout(5_000, () => reject(new Error(`no answer from ${url}`)));
    req.end();
  });
}

async function body(res: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of res) text += String(chunk);
  return text;
}

describe("viewer event streams", () => {
  test("32 idle streams never lock the page out: a new stream ends the oldest, which is told to come back", async () => {
    const store = new MemoryStore();
    const viewer = await startViewer(store, { port: 0 });
    const idle: Awaited<ReturnType<typeof open>>[] = [];
    try {
      const url = `${viewer.url}api/events?session=s`;
      for (let i = 0; i < 32; i++) idle.push(await open(url));
      assert.ok(idle.every((stream) => stream.res.statusCode === 200));
      // The page's own EventSource: no custom header, the browser's same-origin signal.
      const page = await open(url, { "Sec-Fetch-Site": "same-origin" });
      assert.equal(page.res.statusCode, 200);
      const [oldest] = idle;
      assert.ok(oldest);
      assert.match(await body(oldest.res), /retry: 5000/, "the ended stream is told when to reconnect");
      page.res.setEncoding("utf8");
      let text = "";
      page.res.on("data", (chunk: string) => {
        text += chunk;
      });
      const end = Date.now() + 5_000;
      while (!text.includes(": connected") && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      await store.session("s").appendMessage({ id: "m1", role: "user", parts: [] });
      while (!text.includes('"id":"m1"') && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      assert.match(text, /"id":"m1"/, "the page's stream gets live updates");
      // Only the oldest went: the next one still streams.
      const second = idle[1];
      assert.ok(second && !second.res.complete && !second.res.destroyed);
      page.req.destroy();
    } finally {
      for (const stream of idle) stream.req.destroy();
      await viewer.close();
    }
  });

  test("maxEventStreams 0 refuses every stream with 503", async () => {
    const viewer = await startViewer(new MemoryStore(), { port: 0, maxEventStreams: 0 });
    try {
      const refused = await open(`${viewer.url}api/events?session=s`);
      assert.equal(refused.res.statusCode, 503);
      assert.match(await body(refused.res), /"TOO_MANY_STREAMS"/);
    } finally {
      await viewer.close();
    }
  });

  test("a reader that stops reading gets frames dropped, then one reset; the API stays responsive", async () => {
    const store = new MemoryStore();
    const viewer = await startViewer(store, { port: 0 });
    try {
      const stalled = await open(`${viewer.url}api/events?session=s`);
      stalled.res.pause();
      const session = store.session("s");
      const writes = 60_000;
      // The API answers while the reader is stalled (no timing: a busy machine would make a bound flaky).
      for (let i = 0; i < writes; i++) {
        await session.appendMessage({ id: `m${i}`, role: "user", parts: [] });
        if (i % 20_000 === 0) {
          const api = await open(`${viewer.url}api/sessions`);
          assert.equal(api.res.statusCode, 200);
          await body(api.res);
        }
      }
      // Reads again: what waited arrives, then the reset that stands for every frame dropped.
      let text = "";
      stalled.res.setEncoding("utf8");
      stalled.res.on("data", (chunk: string) => {
        text += chunk;
      });
      stalled.res.resume();
      const end = Date.now() + 10_000;
      while (!text.includes('"type":"reset"') && Date.now() < end)
        await new Promise((r) => setTimeout(r, 20));
      const frames = text.split("\n\n").filter((frame) => frame.startsWith("data: "));
      assert.ok(text.includes('"type":"reset"'), `no reset frame among ${frames.length} frames`);
      assert.ok(frames.length < writes, `${frames.length} frames for ${writes} writes: none was dropped`);
      stalled.req.destroy();
    } finally {
      await viewer.close();
    }
  });
});
