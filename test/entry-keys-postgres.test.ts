// Search entries' keys of an owner with a key on Postgres, PGlite and Citus (docs/PRIVACY.md, "Search entries"), as
// entry-keys-sqlite.test.ts on SQLite: a keyed digest in the key column, the real key in reads; an entry sealed
// before digests still reads and its next write replaces it; a rotation moves the digests to the new key (a row
// written under it meanwhile wins); an export carries the real keys and an import seals them again.
import assert from "node:assert/strict";
import { test } from "node:test";
import { isEntryKeyDigest } from "../src/context/entry-keys.js";
import { sealEntry } from "../src/context/sealing.js";
import type { TransferRow } from "../src/contract/transfer.js";
import type { PostgresStore } from "../src/postgres/index.js";
import {
  aliceKeyring,
  newKey,
  onEveryPlace,
  openAt,
  type Place,
  type PlaceCases,
} from "./helpers/rekey-places.js";

const KEY = "alice-pin-zqxentrykeyq";
const LABEL = "facts";
const ALICE = { owner: "alice" };

async function storedKeys(p: Place): Promise<string[]> {
  const { rows } = await p.db.query(`SELECT key FROM "${p.schema}".agent_search_entries ORDER BY seq`);
  return (rows as { key: string }[]).map((row) => (isEntryKeyDigest(row.key) ? "digest" : row.key));
}

const keysOf = async (store: PostgresStore) =>
  (await store.entries.searchEntries(LABEL, "vault")).map((hit) => `${hit.key}=${hit.content}`).sort();

const cases: PlaceCases = (label, place, done) => {
  test(`${label}: digests stored, real keys read, a key written again keeps one row`, async () => {
    const p = await place("entrykeys");
    try {
      const store = await openAt(p, aliceKeyring(newKey()));
      await store.entries.setEntry(LABEL, KEY, "the vault opens", ALICE);
      await store.entries.setEntry(LABEL, KEY, "the vault opens at noon", ALICE);
      await store.entries.setEntry(LABEL, "bob-key-in-clear", "bob's vault", { owner: "bob" });
      assert.deepEqual(await keysOf(store), [
        `${KEY}=the vault opens at noon`,
        "bob-key-in-clear=bob's vault",
      ]);
      await store.close();
      assert.deepEqual(await storedKeys(p), ["digest", "bob-key-in-clear"]);
    } finally {
      await done(p);
    }
  });

  test(`${label}: an entry sealed before digests reads and its next write replaces it`, async () => {
    const p = await place("entrylegacy");
    try {
      const key = newKey();
      const store = await openAt(p, aliceKeyring(key));
      await store.entries.setEntry(LABEL, KEY, "the vault opens", ALICE);
      await p.db.query(
        `UPDATE "${p.schema}".agent_search_entries SET key = $1, content = $2, sealed_chars = $3`,
        [KEY, sealEntry(key, LABEL, KEY, "the vault opens"), "the vault opens".length],
      );
      assert.deepEqual(await keysOf(store), [`${KEY}=the vault opens`]);
      await store.entries.setEntry(LABEL, KEY, "the vault opens at dawn", ALICE);
      assert.equal(await store.entries.countEntries(LABEL), 1, "the old row was replaced, not kept beside");
      assert.deepEqual(await keysOf(store), [`${KEY}=the vault opens at dawn`]);
      await store.close();
      assert.deepEqual(await storedKeys(p), ["digest"]);
    } finally {
      await done(p);
    }
  });

  test(`${label}: a rotation moves the digests; a row written under the new key meanwhile wins`, async () => {
    const p = await place("entryrekey");
    let dropped = false;
    try {
      const [oldKey, key] = [newKey(), newKey()];
      const store = await openAt(p, aliceKeyring(oldKey));
      await store.entries.setEntry(LABEL, KEY, "the vault opens", ALICE);
      await store.entries.setEntry(LABEL, "other", "another vault", ALICE);
      await store.close();
      const rotating = await openAt(p, aliceKeyring(key, [oldKey]));
      await rotating.entries.setEntry(LABEL, "other", "another vault, newer", ALICE);
      await rotating.rekey("alice");
      assert.deepEqual(await keysOf(rotating), [`${KEY}=the vault opens`, "other=another vault, newer"]);
      await rotating.entries.setEntry(LABEL, KEY, "the vault opens late", ALICE);
      assert.equal(await rotating.entries.countEntries(LABEL), 2);
      await rotating.close();
      const onlyNew = await openAt(p, aliceKeyring(key));
      assert.deepEqual(await keysOf(onlyNew), [`${KEY}=the vault opens late`, "other=another vault, newer"]);
      const exported: TransferRow[] = [];
      for await (const row of onlyNew.transfer.exportRows()) exported.push(row);
      assert.deepEqual(
        exported.map((row) => row.key).sort(),
        [KEY, "other"],
        "an export carries the real keys",
      );
      await onlyNew.close();
      await done(p);
      dropped = true;
      const q = await place("entryimport");
      try {
        const copy = await openAt(q, aliceKeyring(newKey()));
        await copy.transfer.importRows(
          (async function* () {
            yield* exported;
          })(),
        );
        assert.deepEqual(await keysOf(copy), [`${KEY}=the vault opens late`, "other=another vault, newer"]);
        await copy.close();
        assert.deepEqual(await storedKeys(q), ["digest", "digest"]);
      } finally {
        await done(q);
      }
    } finally {
      if (!dropped) await done(p);
    }
  });
};

await onEveryPlace(cases);
