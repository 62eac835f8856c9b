// The viewer's /api/facts on memory, SQLite and Postgres (no browser): a session's facts (its own, then its owner's sourced in
// it), an owner's facts, bounded pages with a cursor, statuses, and owner scoping (one owner's facts never answer
// another's request).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { MAX_VIEWER_FACTS } from "../../src/cli/serve/facts-api.js";
import { startViewer, type Viewer } from "../../src/cli/serve/server.js";
import type { FactCapableStore } from "../../src/contract/facts.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { SessionError } from "../../src/errors.js";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { dropSchema, PG_URL, postgresUnavailable } from "../fixtures/postgres-db.js";
import { tempDir } from "./helpers.js";

const tmp = tempDir("agent-session-viewer-facts-");
after(() => tmp.remove());

const HEADERS = { "X-Agent-Session-Viewer": "1" };
const user = (id: string, text: string) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text }],
});

interface Page {
  of: Record<string, unknown>;
  keepsFacts: boolean;
  status: string[];
  facts: {
    id: string;
    text: string;
    owner: string | null;
    sessionId: string | null;
    status: string;
    observedAt: string;
    sources: { sessionId: string; messageId: string }[];
  }[];
  next: string | null;
}

/** alice: a1, a2; bob: b1; nobody: u1. Facts: alice's from a1, from a2, from both; bob's; u1's own; a1's own. */
async function seed(store: FactCapableStore & RegistryCapableStore) {
  const manager = new SessionManager(store);
  const owners: Record<string, string | null> = { a1: "alice", a2: "alice", b1: "bob", u1: null };
  for (const [id, owner] of Object.entries(owners)) {
    await manager.create(id, { id, owner });
    for (const i of [0, 1]) await manager.getSession(id).appendMessage(user(`${id}-m${i}`, `turn ${i}`));
  }
  const fact = (id: string, text: string, sources: [string, string][], at = 1_700_000_000_000) => ({
    id,
    text,
    about: "user",
    observedAt: at,
    producer: "function:test",
    sources: sources.map(([sessionId, messageId]) => ({ sessionId, messageId })),
  });
  await store.facts.add({ owner: "alice" }, [
    fact("f-a1", "Alice lives in Paris.", [["a1", "a1-m0"]]),
    fact("f-a2", "Alice plays chess.", [["a2", "a2-m0"]]),
    fact("f-both", "Alice <script>alert(1)</script> likes tea.", [
      ["a2", "a2-m1"],
      ["a1", "a1-m1"],
    ]),
    fact("f-a1-new", "Alice lives in Lyon.", [["a1", "a1-m1"]]),
  ]);
  await store.facts.supersede({ owner: "alice" }, "f-a1", "f-a1-new");
  await store.facts.add({ owner: "bob" }, [fact("f-b1", "Bob deploys on Thursdays.", [["b1", "b1-m0"]])]);
  await store.facts.add({ sessionId: "u1" }, [fact("f-u1", "Caroline moved to Boston.", [["u1", "u1-m0"]])]);
  await store.facts.add({ sessionId: "a1" }, [fact("f-a1-own", "Kept to a1.", [["a1", "a1-m0"]])]);
}

type Store = FactCapableStore & RegistryCapableStore;
const SCHEMA = `viewer_facts_${process.pid}`;
const skipPostgres = (await postgresUnavailable()) ?? false;
/** A fresh schema on the test server; the store's close drops it. */
async function postgres(): Promise<Store> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await dropSchema(client, SCHEMA);
  const store = await PostgresStore.open(PG_URL, { schema: SCHEMA });
  const close = store.close.bind(store);
  return Object.assign(store, {
    close: async () => {
      await close();
      await dropSchema(client, SCHEMA);
      await client.end();
    },
  });
}

const backends: [string, () => Promise<Store>, string | false][] = [
  ["memory", async () => new MemoryStore(), false],
  ["sqlite", async () => new SqliteStore(tmp.path("viewer-facts.db")), false],
  ["postgres", postgres, skipPostgres],
];

for (const [name, open, skip] of backends) {
  describe(`viewer facts API (${name})`, { skip }, () => {
    let store: Store;
    let viewer: Viewer;
    before(async () => {
      store = await open();
      await seed(store);
      viewer = await startViewer(store, { port: 0 });
    });
    after(async () => {
      await viewer?.close();
      await store?.close();
    });

    async function get(
      params: string,
    ): Promise<{ status: number; body: Page & { error?: { code: string } } }> {
      const res = await fetch(`${viewer.url}api/facts?${params}`, { headers: HEADERS });
      return { status: res.status, body: (await res.json()) as Page & { error?: { code: string } } };
    }
    const ids = (page: Page) => page.facts.map((f) => f.id);

    test("a session's facts: its own, then its owner's with a source in it (current unless asked)", async () => {
      const { status, body } = await get("id=a1");
      assert.equal(status, 200);
      assert.deepEqual(body.of, { sessionId: "a1", owner: "alice" });
      assert.equal(body.keepsFacts, true);
      assert.deepEqual(ids(body), ["f-a1-own", "f-a1-new", "f-both"]);
      assert.equal(body.next, null);
      const f = body.facts.find((x) => x.id === "f-both")!;
      assert.equal(f.text, "Alice <script>alert(1)</script> likes tea.", "text is data, as stored");
      assert.equal(f.observedAt, "2023-11-14T22:13:20.000Z");
      assert.deepEqual(f.sources, [
        { sessionId: "a2", messageId: "a2-m1" },
        { sessionId: "a1", messageId: "a1-m1" },
      ]);
      const all = await get("id=a1&status=current&status=superseded&status=invalidated");
      assert.deepEqual(ids(all.body), ["f-a1-own", "f-a1-new", "f-both", "f-a1"]);
      assert.deepEqual(ids((await get("id=a1&status=superseded")).body), ["f-a1"]);
      assert.deepEqual(ids((await get("id=u1")).body), ["f-u1"], "an unowned session: its own facts");
    });

    test("an owner's facts; one owner's facts never answer another's request", async () => {
      assert.deepEqual(ids((await get("owner=alice")).body), ["f-a1-new", "f-both", "f-a2"]);
      assert.deepEqual(ids((await get("owner=bob")).body), ["f-b1"]);
      assert.deepEqual(ids((await get("owner=carol")).body), []);
      for (const other of ["b1", "u1", "nobody"]) {
        const { status, body } = await get(`id=${other}&owner=alice`);
        assert.equal(status, 404, other);
        assert.equal(body.error?.code, "NOT_FOUND");
      }
      const b1 = await get("id=b1&owner=bob");
      assert.deepEqual(ids(b1.body), ["f-b1"]);
      for (const page of [(await get("id=a2&owner=alice")).body, (await get("owner=alice")).body]) {
        assert.ok(page.facts.every((f) => f.owner === "alice" || f.sessionId === "a2"));
      }
    });

    test("bounded pages with a cursor, through the session's own facts into the owner's", async () => {
      const seen: string[] = [];
      let cursor: string | null = "";
      let pages = 0;
      while (cursor !== null) {
        const { status, body } = await get(
          `id=a1&limit=1&status=current&status=superseded${cursor ? `&cursor=${cursor}` : ""}`,
        );
        assert.equal(status, 200);
        assert.ok(body.facts.length <= 1);
        seen.push(...ids(body));
        cursor = body.next;
        assert.ok(++pages < 20);
      }
      assert.deepEqual(seen, ["f-a1-own", "f-a1-new", "f-both", "f-a1"]);
      const first = (await get("owner=alice&limit=2")).body;
      assert.deepEqual(ids(first), ["f-a1-new", "f-both"]);
      assert.notEqual(first.next, null, "a visible marker that more follow");
      const second = (await get(`owner=alice&limit=2&cursor=${first.next}`)).body;
      assert.deepEqual(ids(second), ["f-a2"]);
      assert.equal(second.next, null);
    });

    test("bad parameters are 400 naming them", async () => {
      for (const [params, named] of [
        ["", /"id" or the "owner" parameter/],
        ["owner=alice&status=gone", /"status" parameter/],
        [`owner=alice&limit=${MAX_VIEWER_FACTS + 1}`, /"limit" parameter/],
        ["owner=alice&limit=0", /"limit" parameter/],
        ["id=a1&cursor=x:1", /"cursor" parameter/],
        ["id=a1&cursor=o:01", /"cursor" parameter/],
        ["owner=alice&cursor=nope", /cursor/],
      ] as const) {
        const res = await fetch(`${viewer.url}api/facts?${params}`, { headers: HEADERS });
        assert.equal(res.status, 400, params);
        const body = (await res.json()) as { error: { code: string; message: string } };
        assert.equal(body.error.code, "INVALID_ARGUMENT", params);
        assert.match(body.error.message, named, params);
      }
    });
  });
}

describe("viewer facts API, bounds and stores without facts", () => {
  test("an owner with many facts from other sessions: a session's page holds its own, read by the store's filter", async () => {
    const store = new MemoryStore();
    const manager = new SessionManager(store);
    for (const id of ["x1", "x2"]) {
      await manager.create(id, { id, owner: "xo" });
      await manager.getSession(id).appendMessage(user(`${id}-m`, "hi"));
    }
    const only = (sessionId: string, i: number) => ({
      text: `Fact ${i}.`,
      observedAt: i,
      producer: "function:test",
      sources: [{ sessionId, messageId: `${sessionId}-m` }],
    });
    await store.facts.add({ owner: "xo" }, [only("x1", 0)]);
    for (let batch = 0; batch < 3; batch++) {
      await store.facts.add(
        { owner: "xo" },
        Array.from({ length: 10 }, (_, i) => only("x2", batch * 10 + i + 1)),
      );
    }
    const viewer = await startViewer(store, { port: 0 });
    try {
      const read = async (q: string) =>
        (await (await fetch(`${viewer.url}api/facts?${q}`, { headers: HEADERS })).json()) as Page;
      const first = await read("id=x1&limit=1");
      assert.deepEqual(
        first.facts.map((f) => f.text),
        ["Fact 0."],
        "the 30 newer facts of x2 are not on x1's page",
      );
      assert.equal(first.next, null);
      const x2 = await read("id=x2&limit=25");
      assert.equal(x2.facts.length, 25);
      assert.match(x2.next ?? "", /^o:\d+$/);
      const rest = await read(`id=x2&limit=25&cursor=${x2.next}`);
      assert.equal(rest.facts.length, 5);
      assert.equal(rest.next, null);
    } finally {
      await viewer.close();
    }
  });

  test("a store without facts: the answer says it keeps none", async () => {
    const memory = new MemoryStore();
    await new SessionManager(memory).create("s1", { id: "s1", owner: "o" });
    // The same store with its fact store hidden (methods bound to it: it keeps private fields).
    const store = new Proxy(memory, {
      get: (target, prop) => {
        if (prop === "facts") return undefined;
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const viewer = await startViewer(store, { port: 0 });
    try {
      for (const q of ["id=s1", "owner=o"]) {
        const res = await fetch(`${viewer.url}api/facts?${q}`, { headers: HEADERS });
        assert.equal(res.status, 200, q);
        const page = (await res.json()) as Page;
        assert.equal(page.keepsFacts, false);
        assert.deepEqual(page.facts, []);
        assert.equal(page.next, null);
      }
    } finally {
      await viewer.close();
      await memory.close();
    }
  });

  test("a store that refuses to open a scope's facts: 403 asking for the keyring, no fact text", async () => {
    const store = new MemoryStore();
    await new SessionManager(store).create("s1", { id: "s1", owner: "sealed" });
    await store.session("s1").appendMessage(user("m1", "hi"));
    await store.facts.add({ owner: "sealed" }, [
      { text: "Secret fact.", observedAt: 1, producer: "p", sources: [{ sessionId: "s1", messageId: "m1" }] },
    ]);
    store.facts.list = async () => {
      throw new SessionError("DECRYPT_FAILED", "no key for owner sealed");
    };
    const viewer = await startViewer(store, { port: 0 });
    try {
      for (const q of ["id=s1", "owner=sealed"]) {
        const res = await fetch(`${viewer.url}api/facts?${q}`, { headers: HEADERS });
        const text = await res.text();
        assert.equal(res.status, 403, q);
        assert.match(text, /restart agent-session serve with --keyring or --master-key-file/);
        assert.doesNotMatch(text, /Secret fact/);
      }
    } finally {
      await viewer.close();
    }
  });
});
