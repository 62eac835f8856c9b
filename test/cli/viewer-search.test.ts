// The viewer's /api/search: ranked recall's options as query parameters (400 naming a bad one), and hits that carry
// the overlay covering them and, on request, the turns around them.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { seedDemo } from "../../src/cli/demo/seed.js";
import { startViewer, type Viewer } from "../../src/cli/serve/server.js";
import { MemoryStore } from "../../src/memory/store.js";

const TOOL = { "X-Agent-Session-Viewer": "1" };

interface Hit {
  id: string;
  role: string;
  sessionId: string;
  compactedBy?: string;
  compaction?: { id: string; fromMessageId: string; toMessageId: string; summary: string };
  context?: { before: { id: string }[]; after: { id: string }[] };
}

describe("viewer search API", () => {
  const store = new MemoryStore();
  let viewer: Viewer;
  let overlay: string;

  before(async () => {
    await seedDemo(store);
    overlay = (await store.session("demo-deploy").getCompactions())[0]!.id;
    viewer = await startViewer(store, { port: 0 });
  });

  after(async () => {
    await viewer?.close();
    await store.close();
  });

  async function search(params: string): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${viewer.url}api/search?${params}`, { headers: TOOL });
    return { status: res.status, body: await res.json() };
  }

  async function hits(params: string): Promise<Hit[]> {
    const { status, body } = await search(params);
    assert.equal(status, 200, JSON.stringify(body));
    return body as Hit[];
  }

  test("a hit a compaction replaced names the overlay, its range and the start of its summary", async () => {
    const [hit] = await hits(`q=${encodeURIComponent("Staging took 40 minutes")}`);
    assert.equal(hit?.id, "u2");
    assert.equal(hit.compactedBy, overlay);
    assert.equal(hit.compaction?.id, overlay);
    assert.equal(hit.compaction?.fromMessageId, "u1");
    assert.equal(hit.compaction?.toMessageId, "a2");
    assert.match(hit.compaction?.summary ?? "", /payments deployment/);
    assert.equal(hit.context, undefined, "no context unless asked");
    const [free] = await hits("q=support+team&match=all");
    assert.equal(free?.id, "u4e");
    assert.equal(free.compactedBy, undefined);
    assert.equal(free.compaction, undefined);
  });

  test("context=n brings the turns around each hit along its branch, oldest first", async () => {
    const [one] = await hits("q=Staging+took+40+minutes&context=1");
    assert.deepEqual(
      [one?.context?.before.map((t) => t.id), one?.context?.after.map((t) => t.id)],
      [["a1"], ["a2"]],
    );
    const [two] = await hits("q=Staging+took+40+minutes&context=2");
    assert.deepEqual(
      two?.context?.before.map((t) => t.id),
      ["u1", "a1"],
    );
    assert.deepEqual(
      two?.context?.after.map((t) => t.id),
      ["a2", "u3"],
    );
    const [none] = await hits("q=Staging+took+40+minutes&context=0&role=");
    assert.equal(none?.context, undefined, "context=0 (and an empty role) is the default");
  });

  test("role, since and until filter the hits", async () => {
    const all = await hits("q=deploy");
    assert.ok(all.some((h) => h.role === "user") && all.some((h) => h.role === "assistant"));
    const users = await hits("q=deploy&role=user");
    assert.ok(users.length > 0 && users.every((h) => h.role === "user"));
    const both = await hits("q=deploy&role=user&role=assistant");
    assert.deepEqual(
      both.map((h) => h.id).sort(),
      all
        .filter((h) => h.role !== "system")
        .map((h) => h.id)
        .sort(),
    );
    assert.deepEqual(await hits("q=deploy&until=2000-01-01"), []);
    assert.deepEqual(await hits("q=deploy&since=2999-01-01T00:00:00Z"), []);
    assert.equal((await hits("q=deploy&since=2000-01-01&until=2999-01-01")).length, all.length);
    assert.equal(
      (await hits("q=deploy&session=demo-deploy&branch=active")).every((h) => h.sessionId === "demo-deploy"),
      true,
    );
  });

  test("a bad parameter is a 400 that names it", async () => {
    const cases: [string, RegExp][] = [
      ["context=11", /"context" parameter must be a whole number from 0 to 10, got "11"/],
      ["context=-1", /"context" parameter must be a whole number from 0 to 10, got "-1"/],
      ["context=1.5", /"context".*got "1\.5"/],
      ["context=two", /"context".*got "two"/],
      ["since=yesterday", /"since" parameter must be an ISO-8601 time .*got "yesterday"/],
      ["until=2025-13-45", /"until" parameter must be an ISO-8601 time/],
      ["branch=main", /"branch" parameter must be "all" or "active", got "main"/],
      ["match=some", /"match" parameter must be "any" or "all", got "some"/],
    ];
    for (const [params, message] of cases) {
      const { status, body } = await search(`q=deploy&${params}`);
      assert.equal(status, 400, params);
      const error = (body as { error: { code: string; message: string } }).error;
      assert.equal(error.code, "INVALID_ARGUMENT", params);
      assert.match(error.message, message, params);
    }
  });
});
