// What the Postgres encryption tests check on every layout (one server, PGlite, a Citus cluster): reads back, and
// the refusals of a wrong key, no key and no keyring.
import assert from "node:assert/strict";
import { PostgresStore } from "../../src/postgres/index.js";
import type { PostgresStoreOptions } from "../../src/postgres/schema.js";
import type { PostgresSource } from "../../src/sql/engines/postgres/client.js";
import { msg } from "../../src/testing/contract/harness.js";
import { assertReadsBack, randomKeyring, SECRET } from "./encryption.js";

/** Reads back everything of alice's session every way a provider reads, and checks the round trip. */
export async function readsBack(store: PostgresStore, alice: string) {
  await assertReadsBack(store, alice);
  assert.equal(
    (await store.searchMessages(SECRET)).length,
    0,
    "a store-wide search finds text in clear only",
  );
  assert.equal((await store.searchMessages("bob plain")).length, 1);
}

/** Wrong key, no key, no keyring: DECRYPT_FAILED on reads and writes, nothing written. */
export async function refusals(
  source: PostgresSource,
  options: PostgresStoreOptions,
  alice: string,
  bob: string,
) {
  const wrong = new PostgresStore(source, { ...options, keyring: randomKeyring(["alice"]) });
  await assert.rejects(wrong.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
  await assert.rejects(wrong.session(alice).getMessage("a1"), { code: "DECRYPT_FAILED" });
  await assert.rejects(wrong.session(alice).appendMessage(msg("w", "written with a wrong key")), {
    code: "DECRYPT_FAILED",
  });
  assert.ok((await wrong.session(bob).getHistory()).length > 0, "other owners read as before");
  await wrong.close();
  const none = new PostgresStore(source, { ...options, keyring: randomKeyring([]) });
  await assert.rejects(none.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
  await assert.rejects(none.session(alice).appendMessage(msg("p", "would be plaintext")), {
    code: "DECRYPT_FAILED",
  });
  await none.close();
  const plain = new PostgresStore(source, options);
  await assert.rejects(plain.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
  await plain.close();
}
