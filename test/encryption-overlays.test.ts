// Sealed compaction summaries and change-log rows (SQLite files, Postgres, PGlite): an encrypted owner's overlay
// summary is sealed in its table and in the change log, read back opened every way (history, overlays, recent
// history, tokens, export, the feed of another store instance), leaves no plaintext in any file or page, is refused
// with a wrong or missing key, re-sealed by an import and a rotation, and gone with the owner's erasure.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { PGlite } from "@electric-sql/pglite";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import type { ChangeEvent } from "../src/contract/feed.js";
import type { TransferItem } from "../src/contract/transfer.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import type { PostgresSource } from "../src/sql/engines/postgres/client.js";
import { SqliteStore } from "../src/sqlite/store.js";
import type { Keyring } from "../src/store/crypto/keyring.js";
import { keyId, openContent, sealContent, sealedStart } from "../src/store/crypto/seal.js";
import { newPGlite } from "./fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";
import { occurrences, randomKeyring, seedOwners } from "./helpers/encryption.js";
import {
  assertSummariesReadBack,
  compact,
  LOOKALIKE,
  replayed,
  SUMMARY,
  SUMMARY_SECRET,
  summariesOf,
} from "./helpers/overlay-encryption.js";
import { markersInRelations, sqliteFiles, total } from "./helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-sealed-overlays-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("SQLite: a sealed summary round-trips, is sealed in its table and the change log, and no file holds it", async () => {
  const path = join(dir, "overlays.db");
  const keyring = randomKeyring(["alice"]);
  const store = new SqliteStore(path, { keyring, changeLog: true });
  const { alice, bob } = await seedOwners(store);
  const overlay = await compact(store, alice, bob);
  assert.equal(overlay.summary, SUMMARY, "the writer gets its summary as given");
  await assertSummariesReadBack(store, alice, bob);
  // Another instance (another process would be the same) replays the log: the summary comes opened.
  const reader = new SqliteStore(path, { keyring, changeLog: true });
  assert.deepEqual(summariesOf(await replayed(reader)), [SUMMARY, LOOKALIKE]);
  await reader.close();
  await store.close();
  assert.equal(occurrences(sqliteFiles(path), SUMMARY_SECRET), 0, "not in the database, its WAL or the log");
  assert.ok(occurrences(sqliteFiles(path), LOOKALIKE) > 0, "the scan reads what it should: bob's is clear");

  const raw = new SqliteStore(path, { changeLog: true });
  const rows = (raw as unknown as { driver: { all<T>(sql: string): T[] } }).driver;
  const summaries = rows.all<{ summary: unknown }>("SELECT summary FROM agent_compactions ORDER BY seq");
  assert.ok(String(summaries[0]?.summary).startsWith("~sealed2:"), "alice's summary is sealed");
  assert.ok(summaries[1]?.summary instanceof Uint8Array, "bob's look-alike is stored encoded, not as sealed");
  const logged = rows.all<{ data: string }>(
    "SELECT data FROM agent_changes WHERE kind = 'compaction' ORDER BY seq",
  );
  assert.equal(JSON.parse(logged[0]!.data).sealed, true);
  assert.ok(JSON.parse(logged[0]!.data).summary.startsWith("~sealed2:"));
  // A store without the keyring refuses the summary: DECRYPT_FAILED, and its feed turns the row into a reset.
  await assert.rejects(raw.session(alice).getCompactions(), { code: "DECRYPT_FAILED" });
  const events = await replayed(raw);
  assert.deepEqual(summariesOf(events), [LOOKALIKE]);
  assert.ok(
    events.some((e) => e.type === "reset" && e.reason.includes("overlay")),
    "alice's row is a reset",
  );
  await raw.close();
});

test("SQLite: a wrong or missing key refuses summaries, writes none in clear; erasure removes them", async () => {
  const path = join(dir, "refusals.db");
  const keyring = randomKeyring(["alice"]);
  const store = new SqliteStore(path, { keyring, changeLog: true });
  const { alice, bob } = await seedOwners(store);
  await compact(store, alice, bob);
  await store.close();
  for (const other of [randomKeyring(["alice"]), randomKeyring([])]) {
    const wrong = new SqliteStore(path, { keyring: other, changeLog: true });
    await assert.rejects(wrong.session(alice).getCompactions(), { code: "DECRYPT_FAILED" });
    await assert.rejects(wrong.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
    await assert.rejects(wrong.session(alice).addCompaction("would be plaintext", "a0", "a1"), {
      code: "DECRYPT_FAILED",
    });
    await wrong.close();
  }
  assert.equal(occurrences(sqliteFiles(path), "would be plaintext"), 0);
  const copy = join(dir, "refusals-copy.db");
  copyFileSync(path, copy);
  const again = new SqliteStore(path, { keyring, changeLog: true });
  await SessionManager.create(again).eraseOwner("alice");
  const driver = (again as unknown as { driver: { get<T>(sql: string, p: unknown[]): T } }).driver;
  const logRows = driver.get<{ n: number }>(
    "SELECT count(*) AS n FROM agent_changes WHERE session_id = ? AND kind <> 'erased'",
    [alice],
  );
  assert.equal(logRows.n, 0, "the session's change-log rows are gone (but the erasure's own)");
  assert.equal(
    driver.get<{ n: number }>("SELECT count(*) AS n FROM agent_compactions", []).n,
    1,
    "only bob's overlay is left",
  );
  await again.close();
  // The copy taken before the erasure holds alice's sealed summary; her key is destroyed, so it does not open.
  const backup = new SqliteStore(copy, { keyring });
  await assert.rejects(backup.session(alice).getCompactions(), { code: "DECRYPT_FAILED" });
  await backup.close();
});

test("SQLite: an import into a keyring store seals the summary again, and a rotation re-seals it", async () => {
  const source = new SqliteStore(join(dir, "source.db"));
  const { alice, bob } = await seedOwners(source);
  await compact(source, alice, bob);
  const items: TransferItem[] = [];
  for await (const item of source.transfer.exportSession(alice)) items.push(item);
  await source.close();
  const path = join(dir, "imported.db");
  const old = crypto.getRandomValues(new Uint8Array(32));
  let current = old;
  let previous: Uint8Array[] = [];
  const keyring: Keyring = {
    key: (owner) => (owner === "alice" ? current : undefined),
    previousKeys: (owner) => (owner === "alice" ? previous : []),
  };
  const target = new SqliteStore(path, { keyring });
  await target.transfer.importSession(
    (async function* () {
      yield* items;
    })(),
  );
  assert.deepEqual(
    (await target.session(alice).getCompactions()).map((c) => c.summary),
    [SUMMARY],
  );
  const driver = (target as unknown as { driver: { get<T>(sql: string, p: unknown[]): T } }).driver;
  const stored = () => driver.get<{ summary: string }>("SELECT summary FROM agent_compactions", []).summary;
  assert.ok(stored().startsWith(sealedStart(keyId(old))), "imported under alice's key");
  current = crypto.getRandomValues(new Uint8Array(32));
  previous = [old];
  await target.rekey("alice");
  assert.ok(stored().startsWith(sealedStart(keyId(current))), "the rotation re-sealed the summary");
  previous = [];
  assert.deepEqual(
    (await target.session(alice).getCompactions()).map((c) => c.summary),
    [SUMMARY],
    "opens with the new key alone",
  );
  await target.close();
  assert.equal(occurrences(sqliteFiles(path), SUMMARY_SECRET), 0);
});

test("free text that starts like sealed content round-trips as a block on SQLite and PGlite (stored encoded)", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const sqlite = new SqliteStore(join(dir, "blocks.db"));
  const db = await newPGlite();
  const pglite = await PostgresStore.open(db, { schema: "blocks" });
  for (const store of [sqlite, pglite]) {
    await store.blocks.setBlock("notes", LOOKALIKE);
    assert.equal(await store.blocks.getBlock("notes"), LOOKALIKE);
    await store.close();
  }
  await db.close();
});

test("a sealed summary is bound to its session, its overlay id and its kind", () => {
  const key = crypto.getRandomValues(new Uint8Array(32));
  const sealed = sealContent(key, "s1", "o1", SUMMARY, "overlay");
  assert.equal(openContent(key, "s1", sealed, "o1", "overlay"), SUMMARY);
  for (const [session, id, kind] of [
    ["s2", "o1", "overlay"],
    ["s1", "o2", "overlay"],
    ["s1", "o1", "message"],
  ] as const) {
    assert.throws(() => openContent(key, session, sealed, id, kind), { code: "DECRYPT_FAILED" });
  }
  // A message's sealed content does not open as a summary either.
  const message = sealContent(key, "s1", "o1", "{}");
  assert.throws(() => openContent(key, "s1", message, "o1", "overlay"), { code: "DECRYPT_FAILED" });
});

test("SQLite: a subscriber in another store instance is delivered the summary opened as it is written", async () => {
  const path = join(dir, "live.db");
  const keyring = randomKeyring(["alice"]);
  const writer = new SqliteStore(path, { keyring, changeLog: { pollMs: 20 } });
  const { alice, bob } = await seedOwners(writer);
  const reader = new SqliteStore(path, { keyring, changeLog: { pollMs: 20 } });
  const events: ChangeEvent[] = [];
  await new Promise<void>((resolve) => {
    reader.subscribe((event) => void events.push(event), { onReady: resolve });
  });
  await compact(writer, alice, bob);
  const end = Date.now() + 10_000;
  while (summariesOf(events).length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(summariesOf(events), [SUMMARY, LOOKALIKE]);
  await reader.close();
  await writer.close();
});

/** Reads the raw summary columns and the change log's compaction rows of `schema`. */
async function rawColumns(db: { query: PGlite["query"] } | PostgresSource, schema: string) {
  const run = db as unknown as { query(sql: string): Promise<{ rows: Record<string, unknown>[] }> };
  const summaries = (
    await run.query(`SELECT summary, summary_json FROM "${schema}".agent_compactions ORDER BY seq`)
  ).rows;
  const logged = (
    await run.query(`SELECT data FROM "${schema}".agent_changes WHERE kind = 'compaction' ORDER BY seq`)
  ).rows;
  return {
    summaries,
    logged: logged.map((r) => JSON.parse(String(r.data)) as { summary: string; sealed?: boolean }),
  };
}

/** The Postgres scenario (a server or PGlite): round trip, raw columns, another instance's feed, refusals. */
async function postgresScenario(source: PostgresSource, schema: string) {
  const keyring = randomKeyring(["alice"]);
  const store = await PostgresStore.open(source, { schema, keyring, changeLog: true });
  const { alice, bob } = await seedOwners(store);
  await compact(store, alice, bob);
  await assertSummariesReadBack(store, alice, bob);
  const { summaries, logged } = await rawColumns(source, schema);
  assert.ok(String(summaries[0]?.summary).startsWith("~sealed2:") && summaries[0]?.summary_json === false);
  assert.equal(summaries[1]?.summary_json, true, "bob's look-alike is stored flagged, not as sealed");
  assert.ok(logged[0]?.sealed === true && logged[0].summary.startsWith("~sealed2:"), "the log row is sealed");
  const reader = await PostgresStore.open(source, { schema, keyring, changeLog: true });
  assert.deepEqual(summariesOf(await replayed(reader)), [SUMMARY, LOOKALIKE]);
  await reader.close();
  for (const other of [randomKeyring(["alice"]), undefined]) {
    const wrong = await PostgresStore.open(source, {
      schema,
      changeLog: true,
      ...(other ? { keyring: other } : {}),
    });
    await assert.rejects(wrong.session(alice).getCompactions(), { code: "DECRYPT_FAILED" });
    await assert.rejects(wrong.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
    if (other) {
      await assert.rejects(wrong.session(alice).addCompaction("would be plaintext", "a0", "a1"), {
        code: "DECRYPT_FAILED",
      });
    }
    const events = await replayed(wrong);
    assert.deepEqual(summariesOf(events), [LOOKALIKE], "alice's row is a reset for a store without her key");
    await wrong.close();
  }
  assert.equal((await rawColumns(source, schema)).summaries.length, 2, "the refused overlay was not written");
  return { store, keyring, alice };
}

function filesUnder(path: string): string[] {
  return readdirSync(path, { recursive: true, encoding: "utf8" })
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile());
}

test("PGlite: sealed summaries in the table and the log, no plaintext in pages or files; erasure removes them", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const dataDir = join(dir, "pglite");
  const db = await newPGlite({ dataDir, extensions: { pageinspect } });
  const { store, alice } = await postgresScenario(db, "sealed");
  await db.query("CHECKPOINT");
  assert.equal(total(await markersInRelations(db, "sealed", SUMMARY_SECRET)), 0);
  assert.ok(
    total(await markersInRelations(db, "sealed", LOOKALIKE)) > 0,
    "the page check reads what it should",
  );
  await SessionManager.create(store).eraseOwner("alice");
  const left = await db.query<{ n: number }>(
    "SELECT (SELECT count(*) FROM sealed.agent_compactions) + (SELECT count(*) FROM sealed.agent_changes WHERE session_id = $1 AND kind <> 'erased') AS n",
    [alice],
  );
  assert.equal(Number(left.rows[0]?.n), 1, "only bob's overlay is left; alice's log rows are gone");
  await store.close();
  await db.close();
  assert.equal(occurrences(filesUnder(dataDir), SUMMARY_SECRET), 0, "no plaintext summary in PGlite's files");
});

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the PostgreSQL server sealed-overlay tests: ${unavailable}`);

describe("Postgres sealed overlay summaries", { skip: unavailable ?? false }, () => {
  const pool = unavailable ? undefined : testPool(4);
  after(() => pool?.end());

  test("sealed in the table and the log, opened for another instance's feed; no page holds the plaintext", async () => {
    const schema = `agent_session_sealov_${process.pid}`;
    const db = pool!;
    await dropSchema(db, schema);
    const { store } = await postgresScenario(db, schema);
    try {
      await db.query("CHECKPOINT");
      assert.equal(total(await markersInRelations(db, schema, SUMMARY_SECRET)), 0);
      assert.ok(total(await markersInRelations(db, schema, LOOKALIKE)) > 0);
    } finally {
      await store.close();
      await dropSchema(db, schema);
    }
  });
});
