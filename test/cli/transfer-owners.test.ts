// The CLI's JSONL carries each session's owner and pin both ways: after export from SQLite and import into
// Postgres (and another SQLite file), the owner's view opens its sessions and retention still sees the pin. A file
// of the older format (no owner, no pin) imports with one warning on stderr naming how many sessions. Blocks and
// entries carry their record (session or owner) too, so owner erasure and session reads behave by record after the
// move; a row line naming both a session and an owner is refused before anything is written.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { hasContextStorage, hasRecords } from "../../src/contract/context.js";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { dropSchema, PG_URL, postgresUnavailable } from "../fixtures/postgres-db.js";
import { runCli, tempDir } from "./helpers.js";

const skipPostgres = (await postgresUnavailable()) ?? false;
const SCHEMA = `cli_owners_${process.pid}`;
const tmp = tempDir();
const source = tmp.path("source.db");
const file = tmp.path("export.jsonl");

const said = (id: string, text: string) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text }],
});

/** Opens `id` as `owner`'s and reads its history, or the error code. */
async function asOwner(manager: SessionManager, owner: string, id: string): Promise<string> {
  try {
    const session = await manager.forOwner(owner).open(id);
    return (await session.getHistory()).map((m) => m.id).join(",");
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

async function assertCarried(manager: SessionManager): Promise<void> {
  assert.equal(await asOwner(manager, "alice", "a1"), "a1-m");
  assert.equal(await asOwner(manager, "bob", "a1"), "NOT_FOUND", "still not bob's");
  assert.equal(await asOwner(manager, "bob", "b1"), "b1-m");
  const a1 = await manager.store.registry.get("a1");
  assert.equal(a1?.owner, "alice");
  assert.equal(a1?.pinned, true);
  const b1 = await manager.store.registry.get("b1");
  assert.equal(b1?.pinned, undefined);
  await assertRecordsCarried(manager);
}

/** The records moved with the rows: reads by record find them, and bob's erasure removes his owner-level rows. */
async function assertRecordsCarried(manager: SessionManager): Promise<void> {
  const { store } = manager;
  assert.ok(hasContextStorage(store) && hasRecords(store.blocks));
  // Neither key names its record: the legacy rule would leave both unrecorded.
  assert.deepEqual(await store.blocks.recordedKeys({ sessionId: "a1" }), ["scratchpad"]);
  assert.deepEqual(await store.blocks.recordedKeys({ owner: "bob" }), ["profile_bob"]);
  assert.equal(await store.entries.countEntries("facts"), 2);
  const receipt = await manager.eraseOwner("bob");
  assert.deepEqual([receipt.sessionIds, receipt.blocks, receipt.entries], [["b1"], 1, 1]);
  assert.equal(await store.blocks.getBlock("profile_bob"), null);
  assert.equal(await store.blocks.getBlock("scratchpad"), "a1's notes", "another owner's rows stay");
  assert.deepEqual(
    (await store.entries.searchEntries("facts", "tea")).map((hit) => hit.key),
    ["alice-tea"],
    "bob's entry is gone, alice's session's entry stays",
  );
}

before(async () => {
  const store = new SqliteStore(source);
  const manager = new SessionManager(store);
  for (const [id, owner] of [
    ["a1", "alice"],
    ["b1", "bob"],
    ["u1", null],
  ] as const) {
    await manager.create(id, { id, owner });
    await manager.getSession(id).appendMessage(said(`${id}-m`, `hello from ${id}`));
  }
  await manager.pin("a1", true);
  await store.blocks.setBlock("scratchpad", "a1's notes", { sessionId: "a1" });
  await store.blocks.setBlock("profile_bob", "bob likes tea", { owner: "bob" });
  await store.entries.setEntry("facts", "bob-tea", "bob drinks tea", { owner: "bob" });
  await store.entries.setEntry("facts", "alice-tea", "alice drinks tea too", { sessionId: "a1" });
  await store.close();
  const exported = await runCli(["export", "--db", source, "-o", file]);
  assert.equal(exported.code, 0, exported.stderr);
});

after(() => tmp.remove());

function lines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("export/import carry owner and pin", () => {
  test("the export's registry records name the owner and the pin", () => {
    const sessions = readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; id?: string; registry?: Record<string, unknown> })
      .filter((r) => r.type === "session");
    const of = (id: string) => sessions.find((s) => s.id === id)?.registry;
    assert.deepEqual([of("a1")?.owner, of("a1")?.pinned], ["alice", true]);
    assert.deepEqual([of("u1")?.owner, of("u1")?.pinned], [null, false]);
  });

  test("the export's block and entry lines name their record", () => {
    const rows = lines(readFileSync(file, "utf8")).filter((r) => r.type === "block" || r.type === "entry");
    assert.deepEqual(rows, [
      { type: "block", key: "profile_bob", content: "bob likes tea", owner: "bob" },
      { type: "block", key: "scratchpad", content: "a1's notes", sessionId: "a1" },
      { type: "entry", label: "facts", key: "bob-tea", content: "bob drinks tea", owner: "bob" },
      { type: "entry", label: "facts", key: "alice-tea", content: "alice drinks tea too", sessionId: "a1" },
    ]);
  });

  test("the CLI's session read finds the block by its record after the move", async () => {
    const target = tmp.path("blocks.db");
    assert.equal((await runCli(["import", file, "--db", target])).code, 0);
    const shown = await runCli(["blocks", "a1", "--db", target, "--json"]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual(
      (JSON.parse(shown.stdout) as { blocks: { key: string }[] }).blocks.map((b) => b.key),
      ["scratchpad"],
    );
  });

  test("a row line naming both a session and an owner, or a record that is no string, is refused", async () => {
    for (const [name, edit, problem] of [
      ["both", { sessionId: "a1", owner: "bob" }, /names both a session and an owner/],
      ["number", { owner: 7 }, /"owner" must be a string/],
    ] as const) {
      const bad = lines(readFileSync(file, "utf8"))
        .map((r) => JSON.stringify(r.key === "profile_bob" ? { ...r, ...edit } : r))
        .join("\n");
      const badFile = tmp.path(`bad-${name}.jsonl`);
      writeFileSync(badFile, `${bad}\n`);
      const target = tmp.path(`bad-${name}.db`);
      const imported = await runCli(["import", badFile, "--db", target]);
      assert.equal(imported.code, 1, imported.stderr);
      assert.match(imported.stderr, problem);
      assert.match(imported.stderr, /line \d+/);
      const store = new SqliteStore(target);
      assert.equal(await store.blocks.getBlock("scratchpad"), null, "nothing was written");
      await store.close();
    }
  });

  test("into SQLite: the owner's view opens its session, the pin holds", async () => {
    const target = tmp.path("target.db");
    const imported = await runCli(["import", file, "--db", target]);
    assert.equal(imported.code, 0, imported.stderr);
    assert.doesNotMatch(imported.stderr, /warning/);
    const store = new SqliteStore(target);
    await assertCarried(new SessionManager(store));
    await store.close();
  });

  test("into Postgres: the owner's view opens its session, the pin holds", {
    skip: skipPostgres,
  }, async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await dropSchema(client, SCHEMA);
    try {
      const imported = await runCli(["import", file, "--db", PG_URL, "--schema", SCHEMA]);
      assert.equal(imported.code, 0, imported.stderr);
      const store = await PostgresStore.open(PG_URL, { schema: SCHEMA });
      try {
        await assertCarried(new SessionManager(store));
      } finally {
        await store.close();
      }
    } finally {
      await dropSchema(client, SCHEMA);
      await client.end();
    }
  });

  test("a version 1 file (no owner, no pin) imports with one warning naming the sessions", async () => {
    const old = readFileSync(file, "utf8")
      .split("\n")
      .map((line) => {
        if (!line) return line;
        const record = JSON.parse(line) as Record<string, unknown>;
        if (record.type === "header") record.version = 1;
        const registry = record.registry as Record<string, unknown> | null | undefined;
        if (registry) {
          delete registry.owner;
          delete registry.pinned;
        }
        return JSON.stringify(record);
      })
      .join("\n");
    const oldFile = tmp.path("v1.jsonl");
    writeFileSync(oldFile, old);
    const imported = await runCli(["import", oldFile, "--db", tmp.path("v1.db"), "--json"]);
    assert.equal(imported.code, 0, imported.stderr);
    assert.equal(imported.stderr.match(/warning/g)?.length, 1, imported.stderr);
    assert.match(imported.stderr, /3 registered sessions in this file carry no owner or pin/);
    assert.equal((JSON.parse(imported.stdout) as { ownerless: number }).ownerless, 3);
  });
});
