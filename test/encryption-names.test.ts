// Session names at rest (docs/PRIVACY.md, "Session names"): the registry's name of a session whose owner has a key
// is sealed (bound to the session id) on register, rename and import, opened on every read; a store without the key
// reads it as `nameSealed` and refuses to write one; a name moved onto another session does not open; names of
// owners without a key stay in clear, a leading `~` escaped.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { SqliteStore } from "../src/sqlite/store.js";
import { occurrences, randomKeyring } from "./helpers/encryption.js";
import { sqliteFiles } from "./helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-names-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const NAME = "my diagnosis zqxnameq";
const RENAMED = "renamed zqxrenamedq";

test("SQLite: an encrypted owner's session name is sealed on disk and opened on every read", async () => {
  const path = join(dir, "names.db");
  const keyring = randomKeyring(["alice"]);
  const store = new SqliteStore(path, { keyring });
  const created = await store.registry.create({ id: "a1", name: NAME, owner: "alice" });
  assert.equal(created.name, NAME);
  assert.equal((await store.registry.get("a1"))?.name, NAME);
  assert.deepEqual(
    (await store.registry.list()).map((s) => s.name),
    [NAME],
  );
  const scanned = [];
  for await (const info of store.registry.scan()) scanned.push(info.name);
  assert.deepEqual(scanned, [NAME]);
  await store.registry.create({ id: "a2", name: "second", owner: "alice" });
  assert.equal((await store.registry.rename("a2", RENAMED))?.name, RENAMED);
  assert.equal((await store.registry.markEnded("a2", "done"))?.name, RENAMED);
  // Bob has no key: his names stay in clear, one starting `~` (stored with it doubled) reads back as given.
  await store.registry.create({ id: "b1", name: "~sealed2:bob's", owner: "bob" });
  assert.equal((await store.registry.get("b1"))?.name, "~sealed2:bob's");
  await store.close();
  assert.equal(occurrences(sqliteFiles(path), "zqxnameq"), 0, "the name is in no byte of the files");
  assert.equal(occurrences(sqliteFiles(path), "zqxrenamedq"), 0, "nor is the new name");

  // A sealed name copied onto another session's row does not open there.
  const copied = new SqliteStore(path, { keyring });
  copied.driver.run(
    "UPDATE agent_sessions SET name = (SELECT name FROM agent_sessions WHERE id = 'a1') WHERE id = 'a2'",
  );
  await assert.rejects(copied.registry.get("a2"), { code: "DECRYPT_FAILED" });
  copied.driver.run("UPDATE agent_sessions SET name = '' WHERE id = 'a2'");
  await copied.close();

  // Without her key: her names read as sealed, a rename or a new named session of hers is refused.
  for (const other of [undefined, randomKeyring(["bob"]), randomKeyring(["alice"])]) {
    const keyless = new SqliteStore(path, other ? { keyring: other } : {});
    const row = await keyless.registry.get("a1");
    assert.deepEqual([row?.name, row?.nameSealed], ["", true]);
    assert.equal((await keyless.registry.get("b1"))?.name, "~sealed2:bob's");
    await assert.rejects(keyless.registry.rename("a1", "clear zqxclearq"), { code: "DECRYPT_FAILED" });
    await assert.rejects(keyless.registry.create({ id: "a3", name: "clear zqxclearq", owner: "alice" }), {
      code: "DECRYPT_FAILED",
    });
    await keyless.close();
  }
  assert.equal(occurrences(sqliteFiles(path), "zqxclearq"), 0, "no refused name reached the files");
  const again = new SqliteStore(path, { keyring });
  assert.equal((await again.registry.get("a1"))?.name, NAME);
  await again.close();
});
