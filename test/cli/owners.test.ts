// Owners in the CLI and the viewer: `--owner <id>` keeps ls, search, export and stats to one owner's sessions,
// and the viewer's `owner` parameter keeps its session list, search and per-session routes to them (another
// owner's session is 404) and shows a session's owner.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { startViewer, type Viewer } from "../../src/cli/serve/server.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import type { SessionStore } from "../../src/contract/store.js";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
const db = tmp.path("owners.db");
after(() => tmp.remove());

const user = (id: string, text: string) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text }],
});

/** alice: a1, a2; bob: b1; nobody: u1. Each holds a message with "deploy". */
async function seed(store: SessionStore & RegistryCapableStore): Promise<void> {
  const manager = new SessionManager(store);
  for (const [id, owner] of [
    ["a1", "alice"],
    ["a2", "alice"],
    ["b1", "bob"],
    ["u1", null],
  ] as const) {
    await manager.create(id, { id, owner });
    await manager.getSession(id).appendMessage(user(`${id}-m`, `deploy on friday (${id})`));
  }
}

describe("CLI --owner", () => {
  before(async () => {
    const store = new SqliteStore(db);
    await seed(store);
    await store.close();
  });

  test("ls --owner lists the owner's sessions only, with an OWNER column when sessions have owners", async () => {
    const listed = parseJson<{ id: string; owner: string | null }[]>(
      await runCli(["ls", "--owner", "alice", "--json", "--db", db]),
    );
    assert.deepEqual(listed.map((s) => [s.id, s.owner]).sort(), [
      ["a1", "alice"],
      ["a2", "alice"],
    ]);
    const text = await runCli(["ls", "--db", db]);
    assert.match(text.stdout, /OWNER/);
    assert.match(text.stdout, /^b1\s.*\sbob$/m);
    const bad = await runCli(["ls", "--owner", "a\u0007b", "--db", db]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--owner must be/);
  });

  test("search --owner finds the owner's messages only; another owner's --session is not found", async () => {
    const hits = parseJson<{ sessionId: string }[]>(
      await runCli(["search", "deploy friday", "--owner", "bob", "--json", "--db", db]),
    );
    assert.deepEqual(
      hits.map((h) => h.sessionId),
      ["b1"],
    );
    const other = await runCli(["search", "deploy", "--owner", "bob", "--session", "a1", "--db", db]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /session "a1" not found/);
  });

  test("export --owner writes the owner's sessions only; an owner without sessions exports none", async () => {
    const file = tmp.path("alice.jsonl");
    const counts = parseJson<{ sessions: number; messages: number }>(
      await runCli(["export", "--owner", "alice", "-o", file, "--json", "--db", db]),
    );
    assert.equal(counts.sessions, 2);
    assert.equal(counts.messages, 2);
    const written = readFileSync(file, "utf8");
    assert.ok(!written.includes("(b1)") && !written.includes("(u1)"));
    const none = parseJson<{ sessions: number; messages: number }>(
      await runCli(["export", "--owner", "carol", "-o", tmp.path("carol.jsonl"), "--json", "--db", db]),
    );
    assert.deepEqual([none.sessions, none.messages], [0, 0]);
  });

  test("stats --owner sums the owner's sessions only", async () => {
    const stats = parseJson<{ owner: string; sessions: { total: number }; messages: number; blocks: null }>(
      await runCli(["stats", "--owner", "alice", "--json", "--db", db]),
    );
    assert.equal(stats.owner, "alice");
    assert.equal(stats.sessions.total, 2);
    assert.equal(stats.messages, 2);
    assert.equal(stats.blocks, null);
  });
});

describe("viewer owner parameter", () => {
  const store = new MemoryStore();
  let viewer: Viewer;
  before(async () => {
    await seed(store);
    viewer = await startViewer(store, { port: 0 });
  });
  after(async () => {
    await viewer?.close();
    await store.close();
  });

  async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${viewer.url}api/${path}`, { headers: { "X-Agent-Session-Viewer": "1" } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  test("?owner= keeps the session list and the search to the owner; a session shows its owner", async () => {
    const listed = (await get("sessions?owner=alice")).body.sessions as { id: string }[];
    assert.deepEqual(listed.map((s) => s.id).sort(), ["a1", "a2"]);
    const hits = (await get("search?q=deploy&owner=bob")).body as unknown as { sessionId: string }[];
    assert.deepEqual(
      hits.map((h) => h.sessionId),
      ["b1"],
    );
    assert.equal(((await get("session?id=b1")).body.summary as { owner: string }).owner, "bob");
    const bad = await get(`sessions?owner=${encodeURIComponent("a\nb")}`);
    assert.equal(bad.status, 400);
    assert.match((bad.body.error as { message: string }).message, /"owner" parameter/);
    // The page passes its own ?owner= on and shows the owner fact.
    const page = await (await fetch(viewer.url)).text();
    assert.match(page, /location\.search\)\.get\("owner"\)/);
    assert.match(page, /fact\(facts, "owner"/);
  });

  test("?owner= on a session's routes: another owner's or an unowned session is 404, as an unknown one", async () => {
    for (const route of ["session?id=", "history?id=", "blocks?id=", "search?q=deploy&session="]) {
      assert.equal((await get(`${route}a1&owner=alice`)).status, 200, route);
      for (const other of ["b1", "u1", "nobody"]) {
        const { status, body } = await get(`${route}${other}&owner=alice`);
        assert.equal(status, 404, `${route}${other}`);
        assert.deepEqual(body, {
          error: { code: "NOT_FOUND", message: `session ${JSON.stringify(other)} not found` },
        });
      }
    }
    assert.equal((await get("history?id=b1")).status, 200, "without ?owner= every session is shown");
    const events = (path: string, method = "GET") =>
      fetch(`${viewer.url}api/events?${path}`, { method, headers: { "X-Agent-Session-Viewer": "1" } });
    assert.equal((await events("session=a1&owner=alice", "HEAD")).status, 200);
    const foreign = await events("session=b1&owner=alice");
    assert.equal(foreign.status, 404);
    assert.equal(((await foreign.json()) as { error: { code: string } }).error.code, "NOT_FOUND");
    const everyone = await events("owner=alice");
    assert.equal(everyone.status, 400, "frames of every session would name other owners' sessions");
    const refusal = (await everyone.json()) as { error: { code: string; message: string } };
    assert.equal(refusal.error.code, "INVALID_ARGUMENT");
    assert.match(refusal.error.message, /"owner" parameter needs "session"/);
    // The page passes its ?owner= to every request and to its event stream.
    const page = await (await fetch(viewer.url)).text();
    assert.match(page, /if \(owner\) url\.searchParams\.set\("owner", owner\)/);
    assert.match(page, /"&owner=" \+ encodeURIComponent\(owner\)/);
  });
});
