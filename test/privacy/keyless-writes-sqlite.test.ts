// A SQLite store opened without alice's key (no keyring, a keyring without her key, a wrong key), on a file where
// another store sealed her content, refuses DECRYPT_FAILED every write of her content and every search of her, on
// both drivers and the sql tag: nothing of it reaches the file in clear, and the keyed store reads her rows as
// they were (docs/PRIVACY.md, "Refusals").
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { SqliteOptions } from "../../src/sqlite/connection/open.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { occurrences, randomKeyring } from "../helpers/encryption.js";
import {
  ALICE_SECRET,
  assertRefused,
  assertUntouched,
  CLEAR,
  KEYLESS,
  seedAlice,
} from "../helpers/keyless-writes.js";
import { sqliteFiles } from "../helpers/purge.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-keyless-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// node:sqlite needs Node.js >= 22.13 (test/node-sqlite.test.ts); the sql tag is a Durable Object's, over one file.
const nodeSqlite =
  Number(process.versions.node.split(".")[0]) >= 23 || /^22\.(1[3-9]|[2-9]\d)/.test(process.versions.node);
const DRIVERS: {
  name: string;
  open: (path: string, options: SqliteOptions) => SqliteStore;
  skip?: string;
}[] = [
  { name: "better-sqlite3", open: (path, options) => new SqliteStore(path, options) },
  {
    name: "node:sqlite",
    open: (path, options) => new SqliteStore(path, { ...options, driver: "node:sqlite" }),
    ...(nodeSqlite ? {} : { skip: `node:sqlite needs Node.js >= 22.13 (running ${process.version})` }),
  },
  { name: "sql tag", open: (path, options) => new SqliteStore(sqlTagAgent(path), options) },
];

for (const { name, open, skip } of DRIVERS) {
  test(`SQLite (${name}): a store without alice's key refuses every write and search of hers, nothing in clear`, {
    skip: skip ?? false,
  }, async () => {
    const path = join(dir, `${name.replace(/\W/g, "")}.db`);
    const keyring = randomKeyring(["alice"]);
    const keyed = open(path, { keyring });
    const alice = await seedAlice(keyed);
    for (const { name: without, keyring: other } of KEYLESS) {
      const store = open(path, other ? { keyring: other } : {});
      await assertRefused(store, alice, without);
      // Another owner's sessions are written in clear as ever.
      const bob = await store.registry.create({ id: `bob-${without}`, name: "bob", owner: "bob" });
      await store
        .session(bob.id)
        .appendMessage({ id: "b0", role: "user", parts: [{ type: "text", text: "bob" }] });
      await store.close();
    }
    await assertUntouched(keyed, alice);
    await keyed.close();
    assert.equal(occurrences(sqliteFiles(path), CLEAR), 0, "no refused write reached the file");
    assert.equal(occurrences(sqliteFiles(path), ALICE_SECRET), 0, "alice's content is sealed");
  });
}

test("SQLite: a store that found a session in clear refuses its next append once another store gave the owner a key", async () => {
  const path = join(dir, "clear-guard.db");
  const plain = new SqliteStore(path);
  const keyring = randomKeyring(["bob"]);
  const keyed = new SqliteStore(path, { keyring });
  const { id } = await plain.registry.create({ id: "bob-chat", name: "bob", owner: "bob" });
  const text = (id: string, t = id) => ({
    id,
    role: "user" as const,
    parts: [{ type: "text" as const, text: t }],
  });
  // Two appends in clear: the second relies on what the first found (no look-up; its insert checks it).
  await plain.session(id).appendMessage(text("c0"));
  await plain.session(id).appendMessage(text("c1"));
  // Another store seals bob's next message: bob has a recorded key now.
  await keyed.session(id).appendMessage(text("k2", `k2 ${CLEAR}`));
  await assert.rejects(plain.session(id).appendMessage(text("c3", `c3 ${CLEAR}`)), {
    code: "DECRYPT_FAILED",
  });
  // The keyed store reads every row but the refused one.
  assert.deepEqual(
    (await keyed.session(id).getHistory()).map((m) => m.id),
    ["c0", "c1", "k2"],
  );
  await plain.close();
  await keyed.close();
  assert.equal(occurrences(sqliteFiles(path), CLEAR), 0);
});
