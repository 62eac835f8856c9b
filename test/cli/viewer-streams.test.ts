// The viewer's event streams are capped and bounded: past `maxEventStreams` a new stream gets 503, and a reader
// that stops reading gets frames dropped (then one `reset` frame) instead of an ever-growing buffer, while the API
// stays responsive. Loopback only, bounded loops (issue 32).
import assert from "node:assert/strict";
import { type ClientRequest, type IncomingMessage, request } from "node:http";
import { describe, test } from "node:test";
import { startViewer } from "../../src/cli/serve/server.js";
import { MemoryStore } from "../../src/memory/store.js";

const OWN = { "X-Agent-Session-Viewer": "1" };

/** Opens a request and resolves with its response head (the body is left unread). */
function open(url: string): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: OWN }, (res) => resolve({ req, res }));
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
  test("past maxEventStreams a stream is refused with 503; a closed one frees its slot", async () => {
    const store = new MemoryStore();
    const viewer = await startViewer(store, { port: 0, maxEventStreams: 2 });
    try {
      const url = `${viewer.url}api/events?session=s`;
      const first = await open(url);
      const second = await open(url);
      assert.equal(first.res.statusCode, 200);
      assert.equal(second.res.statusCode, 200);
      const third = await open(url);
      assert.equal(third.res.statusCode, 503);
      assert.equal(third.res.headers["retry-after"], "5");
      assert.match(await body(third.res), /"TOO_MANY_STREAMS".*at most 2 event streams/);
      first.req.destroy();
      let status: number | undefined;
      for (let i = 0; i < 100 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 20));
        const next = await open(url);
        status = next.res.statusCode;
        next.req.destroy();
      }
      assert.equal(status, 200, "the closed stream's slot was freed");
      second.req.destroy();
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
      let slowest = 0;
      for (let i = 0; i < writes; i++) {
        await session.appendMessage({ id: `m${i}`, role: "user", parts: [] });
        if (i % 20_000 === 0) {
          const started = Date.now();
          const api = await open(`${viewer.url}api/sessions`);
          assert.equal(api.res.statusCode, 200);
          await body(api.res);
          slowest = Math.max(slowest, Date.now() - started);
        }
      }
      assert.ok(slowest < 2_000, `/api/sessions took ${slowest} ms while a reader stalled`);
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
