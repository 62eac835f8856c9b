// The viewer's /api/sessions: the sessions with the newest activity, at most `limit` (default 200), and whether
// others exist; a bad limit is a 400 naming it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MAX_VIEWER_SESSIONS, VIEWER_SESSIONS } from "../../src/cli/serve/api.js";
import { startViewer, type Viewer } from "../../src/cli/serve/server.js";
import { MemoryStore } from "../../src/memory/store.js";

const TOOL = { "X-Agent-Session-Viewer": "1" };

describe("viewer sessions API", () => {
  const store = new MemoryStore();
  let viewer: Viewer;

  before(async () => {
    for (const id of ["a", "b", "c", "d", "e"]) await store.registry.create({ id, name: id.toUpperCase() });
    viewer = await startViewer(store, { port: 0 });
  });

  after(async () => {
    await viewer?.close();
    await store.close();
  });

  async function sessions(params = ""): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${viewer.url}api/sessions${params}`, { headers: TOOL });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const ids = (body: Record<string, unknown>) => (body.sessions as { id: string }[]).map((s) => s.id);

  test("newest activity first, `limit` of them, and `more` when others exist", async () => {
    const all = await sessions();
    assert.equal(all.status, 200);
    assert.deepEqual(ids(all.body), ["e", "d", "c", "b", "a"]);
    assert.equal(all.body.more, false);
    const two = await sessions("?limit=2");
    assert.deepEqual(ids(two.body), ["e", "d"]);
    assert.equal(two.body.more, true);
    assert.equal((await sessions("?limit=5")).body.more, false);
    assert.equal((await sessions("?limit=")).body.more, false, "an empty limit is the default");
    assert.ok(VIEWER_SESSIONS >= 100 && VIEWER_SESSIONS <= MAX_VIEWER_SESSIONS);
  });

  test("a limit that is not a whole number from 1 to the maximum is a 400 naming it", async () => {
    for (const bad of ["0", String(MAX_VIEWER_SESSIONS + 1), "abc", "1e3", "-1", "2.5", " 5"]) {
      const { status, body } = await sessions(`?limit=${encodeURIComponent(bad)}`);
      assert.equal(status, 400, bad);
      const error = body.error as { code: string; message: string };
      assert.equal(error.code, "INVALID_ARGUMENT");
      assert.match(error.message, /"limit" parameter must be a whole number from 1 to/);
    }
  });
});
