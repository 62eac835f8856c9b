// AgentSessionStore's items under key rotation (docs/LANGGRAPH.md "Store", PRIVACY.md "Key rotation"): an owner
// whose only data is store items, written in clear, gets them sealed by rekey(owner, { sealClear: true }) with no
// clear byte left after the purge, then rotated to a new key that alone opens them. The seal-clear tests
// (test/helpers/seal-clear.ts) cover items next to every other kind, on every backend.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { AgentSessionStore } from "../../src/langgraph/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { occurrences } from "../helpers/encryption.js";
import { sqliteFiles } from "../helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "lgstore-rekey-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("SQLite: an owner with store items only gets them sealed by rekey --seal-clear, then rotated; no clear byte left", async () => {
  const path = join(dir, "items-only.db");
  const put = async (keyring?: Keyring) => {
    const store = new SqliteStore(path, keyring ? { keyring } : {});
    await new AgentSessionStore(store).put(["carol", "memories"], "m", { text: "zqxcarolclearq likes tea" });
    await store.close();
  };
  const read = async (keyring: Keyring) => {
    const store = new SqliteStore(path, { keyring });
    try {
      return (await new AgentSessionStore(store).get(["carol", "memories"], "m"))?.value.text;
    } finally {
      await store.close();
    }
  };
  await put();
  const [first, second] = [newKey(), newKey()];
  const sealing = new SqliteStore(path, { keyring: carolKeyring(first) });
  assert.deepEqual((await sealing.rekey("carol", { sealClear: true })).resealed, 0, "no message to count");
  assert.equal((await sealing.purge()).complete, true);
  await sealing.close();
  assert.equal(
    occurrences(sqliteFiles(path), "zqxcarolclearq"),
    0,
    "her item sealed, its clear bytes purged",
  );
  assert.equal(await read(carolKeyring(first)), "zqxcarolclearq likes tea");
  const rotating = new SqliteStore(path, { keyring: carolKeyring(second, [first]) });
  await rotating.rekey("carol");
  await rotating.close();
  assert.equal(await read(carolKeyring(second)), "zqxcarolclearq likes tea", "the new key alone opens it");
  await assert.rejects(read(carolKeyring(first)), { code: "DECRYPT_FAILED" });
});

const newKey = () => crypto.getRandomValues(new Uint8Array(32));
const carolKeyring = (key: Uint8Array, previous: Uint8Array[] = []): Keyring => ({
  key: (owner) => (owner === "carol" ? key : undefined),
  previousKeys: (owner) => (owner === "carol" ? previous : []),
});
