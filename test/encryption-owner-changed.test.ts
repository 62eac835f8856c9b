// A store that deletes (or erases) a session and creates it again under the same id for another owner forgets the
// owner it remembered, so its reads open what another process then sealed for the new owner; before, it kept the
// old owner and refused the new owner's rows with DECRYPT_FAILED until one of its own writes looked again. Two
// keyring stores on one SQLite file, one PGlite database and one schema of the test server.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { SessionStore } from "../src/contract/store.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { msg } from "../src/testing/contract/harness.js";
import { newPGlite } from "./fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";
import { randomKeyring } from "./helpers/encryption.js";

type Store = SqliteStore | PostgresStore;

/** A reads alice's session, deletes or erases it, creates it for bob; B writes bob's rows; A reads them. */
async function scenario(a: Store, b: Store, end: "delete" | "erase"): Promise<void> {
  const manager = SessionManager.create(a as SessionStore & Store);
  await manager.create("s", { id: "s", owner: "alice" });
  await a.session("s").appendMessage(msg("m1", "alice's secret"));
  assert.equal((await a.session("s").getHistory()).length, 1, "A knows the session as alice's");
  if (end === "delete") await manager.delete("s");
  else await manager.erase("s");
  await manager.create("s", { id: "s", owner: "bob" });
  await b.session("s").appendMessage(msg("m2", "bob's secret"));
  await b.blocks.setBlock("notes", "bob's notes", { sessionId: "s" });
  assert.deepEqual(
    (await a.session("s").getHistory()).map((m) => m.id),
    ["m2"],
  );
  assert.equal(await a.blocks.getBlock("notes"), "bob's notes");
}

for (const end of ["delete", "erase"] as const) {
  test(`SQLite: a session this store ${end}s and creates again for another owner is read as the new owner's`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "owner-changed-"));
    const keyring = randomKeyring(["alice", "bob"]);
    const [a, b] = [
      new SqliteStore(join(dir, "s.db"), { keyring }),
      new SqliteStore(join(dir, "s.db"), { keyring }),
    ];
    try {
      await scenario(a, b, end);
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`PGlite: a session this store ${end}s and creates again for another owner is read as the new owner's`, {
    skip: pgliteSwitchedOff() ?? false,
  }, async () => {
    const db = await newPGlite();
    const keyring = randomKeyring(["alice", "bob"]);
    const a = await PostgresStore.open(db, { schema: "owner_changed", keyring });
    const b = await PostgresStore.open(db, { schema: "owner_changed", keyring });
    try {
      await scenario(a, b, end);
    } finally {
      await a.close();
      await b.close();
      await db.close();
    }
  });

  test(`Postgres: a session this store ${end}s and creates again for another owner is read as the new owner's`, async (t) => {
    const unavailable = await postgresUnavailable();
    if (unavailable) return t.skip(unavailable);
    const pool = testPool(4);
    const schema = `owner_changed_${end}_${process.pid}`;
    await dropSchema(pool, schema);
    const keyring = randomKeyring(["alice", "bob"]);
    const a = await PostgresStore.open(pool, { schema, keyring });
    const b = await PostgresStore.open(pool, { schema, keyring });
    try {
      await scenario(a, b, end);
    } finally {
      await a.close();
      await b.close();
      await dropSchema(pool, schema);
      await pool.end();
    }
  });
}
