// An owner's export (`export --owner bob`, writeExport with `owner`) carries, besides bob's sessions and their
// blocks, the blocks and entries recorded as bob's own (`profile_bob`: not any session's), with their record; an
// import restores them as bob's, so his erasure removes them there. Another owner's rows and unrecorded rows stay
// out, and so do bob's own rows when sessions are named. On memory, SQLite and PGlite through the store API, and
// through the CLI from a SQLite file into SQLite and Postgres.
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { after, describe, test } from "node:test";
import pg from "pg";
import { writeExport } from "../../src/cli/transfer/export.js";
import { readImport } from "../../src/cli/transfer/import.js";
import { readLines } from "../../src/cli/transfer/lines.js";
import { type ContextCapableStore, hasRecords } from "../../src/contract/context.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import type { TransferCapableStore } from "../../src/contract/transfer.js";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { msg } from "../../src/testing/contract/harness.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, PG_URL, pgliteSwitchedOff, postgresUnavailable } from "../fixtures/postgres-db.js";
import { runCli, tempDir } from "./helpers.js";

type Store = ContextCapableStore & RegistryCapableStore & TransferCapableStore;

/** Alice's and bob's sessions, their session-recorded rows, each owner's own rows and an unrecorded entry. */
async function seed(store: Store): Promise<void> {
  const manager = SessionManager.create(store);
  for (const [id, owner] of [
    ["a1", "alice"],
    ["b1", "bob"],
  ] as const) {
    await manager.create(id, { id, owner });
    await store.session(id).appendMessage(msg(`${id}-m`, `hello from ${id}`));
  }
  await store.blocks.setBlock("notes", "b1's notes", { sessionId: "b1" });
  await store.blocks.setBlock("profile_bob", "bob likes tea", { owner: "bob" });
  await store.blocks.setBlock("profile_alice", "alice likes coffee", { owner: "alice" });
  await store.entries.setEntry("facts", "bob-tea", "bob drinks tea", { owner: "bob" });
  await store.entries.setEntry("facts", "alice-tea", "alice drinks tea too", { sessionId: "a1" });
  await store.entries.setEntry("facts", "loose", "nobody's tea");
}

/** The block and entry lines of an export, as written. */
function rowsOf(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((r) => r.type === "block" || r.type === "entry");
}

const BOBS = [
  { type: "block", key: "notes", content: "b1's notes", sessionId: "b1" },
  { type: "block", key: "profile_bob", content: "bob likes tea", owner: "bob" },
  { type: "entry", label: "facts", key: "bob-tea", content: "bob drinks tea", owner: "bob" },
];

/** Bob's rows as an import left them: recorded as his and his session's, and gone with his erasure. */
async function assertBobsRestored(store: Store): Promise<void> {
  assert.ok(hasRecords(store.blocks));
  assert.deepEqual(await store.blocks.recordedKeys({ owner: "bob" }), ["profile_bob"]);
  assert.deepEqual(await store.blocks.recordedKeys({ sessionId: "b1" }), ["notes"]);
  assert.equal(await store.blocks.getBlock("profile_alice"), null);
  assert.equal(await store.entries.countEntries("facts"), 1);
  const receipt = await SessionManager.create(store).eraseOwner("bob");
  assert.deepEqual([receipt.sessionIds, receipt.blocks, receipt.entries], [["b1"], 2, 1]);
  assert.equal(await store.blocks.getBlock("profile_bob"), null);
  assert.equal(await store.entries.countEntries("facts"), 0);
}

const none = { increment() {}, setTotal() {}, stop() {} };

/** Bob's export through the store API: its text and counts. */
async function exportBob(store: Store, named = false) {
  let text = "";
  const counts = await writeExport(
    store,
    async (chunk) => {
      text += chunk;
    },
    {
      sessionIds: ["b1"],
      exact: true,
      progress: none,
      countFirst: false,
      ...(named ? {} : { owner: "bob" }),
    },
  );
  return { text, counts };
}

const STORES: [string, () => Promise<{ store: Store; close: () => Promise<void> }>][] = [
  ["memory", async () => ({ store: new MemoryStore(), close: async () => undefined })],
  [
    "SQLite",
    async () => {
      const store = new SqliteStore(":memory:");
      return { store, close: () => store.close() };
    },
  ],
  [
    "PGlite",
    async () => {
      const db = await newPGlite();
      const store = await PostgresStore.open(db, { schema: "owner_rows" });
      return {
        store,
        close: async () => {
          await store.close();
          await db.close();
        },
      };
    },
  ],
];

describe("an owner's export carries the owner's own rows (store API)", () => {
  for (const [name, open] of STORES) {
    const skip = name === "PGlite" ? (pgliteSwitchedOff() ?? false) : false;
    test(`${name}: bob's rows go out with their records and come back as his`, { skip }, async () => {
      const source = await open();
      const target = await open();
      try {
        await seed(source.store);
        const { text, counts } = await exportBob(source.store);
        assert.deepEqual(rowsOf(text), BOBS);
        assert.deepEqual([counts.sessions, counts.blocks, counts.entries], [1, 2, 1]);
        // Sessions named: only their blocks.
        assert.deepEqual(rowsOf((await exportBob(source.store, true)).text), [BOBS[0]]);
        // A named session's export carries the entries recorded for it, with their record.
        let alice = "";
        await writeExport(
          source.store,
          async (chunk) => {
            alice += chunk;
          },
          {
            sessionIds: ["a1"],
            exact: true,
            progress: none,
            countFirst: false,
          },
        );
        assert.deepEqual(rowsOf(alice), [
          {
            type: "entry",
            label: "facts",
            key: "alice-tea",
            content: "alice drinks tea too",
            sessionId: "a1",
          },
        ]);
        const aliceTarget = await open();
        try {
          await readImport(aliceTarget.store, readLines(Readable.from([alice])));
          assert.equal(await aliceTarget.store.entries.countEntries("facts"), 1);
          const receipt = await SessionManager.create(aliceTarget.store).erase("a1");
          assert.equal(receipt.entries, 1, "the entry came back as a1's, so a1's erasure takes it");
        } finally {
          await aliceTarget.close();
        }
        await readImport(target.store, readLines(Readable.from([text])));
        await assertBobsRestored(target.store);
      } finally {
        await source.close();
        await target.close();
      }
    });
  }
});

const tmp = tempDir();
after(() => tmp.remove());
const skipPostgres = (await postgresUnavailable()) ?? false;

describe("export --owner carries the owner's own rows (CLI)", () => {
  test("from SQLite into SQLite and Postgres", async () => {
    const db = tmp.path("source.db");
    const source = new SqliteStore(db);
    await seed(source);
    await source.close();
    const file = tmp.path("bob.jsonl");
    const exported = await runCli(["export", "--owner", "bob", "-o", file, "--json", "--db", db]);
    assert.equal(exported.code, 0, exported.stderr);
    const counts = JSON.parse(exported.stdout) as { sessions: number; blocks: number; entries: number };
    assert.deepEqual([counts.sessions, counts.blocks, counts.entries], [1, 2, 1]);
    const target = tmp.path("target.db");
    const imported = await runCli(["import", file, "--db", target]);
    assert.equal(imported.code, 0, imported.stderr);
    const store = new SqliteStore(target);
    await assertBobsRestored(store).finally(() => store.close());
    if (skipPostgres) return;
    const schema = `cli_owner_rows_${process.pid}`;
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await dropSchema(client, schema);
    try {
      const into = await runCli(["import", file, "--db", PG_URL, "--schema", schema]);
      assert.equal(into.code, 0, into.stderr);
      const pgStore = await PostgresStore.open(PG_URL, { schema });
      await assertBobsRestored(pgStore).finally(() => pgStore.close());
    } finally {
      await dropSchema(client, schema);
      await client.end();
    }
  });
});
