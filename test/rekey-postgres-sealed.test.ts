// Key rotation on Postgres and PGlite over everything an owner has sealed (docs/PRIVACY.md, "Key rotation"): halfway
// through, a search of the owner's messages hashes under both keys and finds every one; at the end the messages'
// search vectors, the overlay summaries, the blocks and the entries are all under the new key, and a store whose
// keyring has dropped the old key reads every one of them and finds every message.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { PostgresStore } from "../src/postgres/index.js";
import { keyId, sealedStart } from "../src/store/crypto/seal.js";
import { SECRET, seedOwners } from "./helpers/encryption.js";
import { assertSummariesReadBack, compact } from "./helpers/overlay-encryption.js";
import {
  aliceKeyring,
  newKey,
  onEveryPlace,
  openAt,
  type Place,
  type PlaceCases,
} from "./helpers/rekey-places.js";
import { assertAliceReads, seed as seedContext } from "./helpers/sealed-context.js";

/** Rows of `table` whose `column` is sealed under `key` (their first bytes name it). */
async function under(p: Place, table: string, column: string, key: Uint8Array): Promise<number> {
  const start = sealedStart(keyId(key));
  const { rows } = await p.db.query(
    `SELECT count(*)::int AS n FROM "${p.schema}".${table} WHERE left(${column}, $1) = $2`,
    [start.length, start],
  );
  return (rows[0] as { n: number }).n;
}

/** Alice's sealed rows of each kind under `key`: messages, summaries, blocks, entries. */
async function sealedUnder(p: Place, key: Uint8Array): Promise<number[]> {
  return [
    await under(p, "agent_messages", "content", key),
    await under(p, "agent_compactions", "summary", key),
    await under(p, "agent_context_blocks", "content", key),
    await under(p, "agent_search_entries", "content", key),
  ];
}

/** The ids of alice's messages a search of the secret word finds: by owner, by her session, by a set of sessions. */
async function found(store: PostgresStore, alice: string): Promise<string[][]> {
  const ids = (hits: { id: string }[]) => hits.map((h) => h.id).sort();
  return [
    ids(await store.searchMessages(SECRET, { owner: "alice", limit: 100 })),
    ids(await store.searchMessages(SECRET, { sessionId: alice, limit: 100 })),
    ids(await store.searchMessages(SECRET, { sessionIds: [alice], limit: 100 })),
  ];
}

const ALL = ["a0", "a1", "a2", "a3", "a4", "a5"];

/** The case, on one database. */
const sealedRekeyCases: PlaceCases = (label, place, done) => {
  test(`${label} rekey: messages stay found halfway and after; summaries, blocks and entries follow the key`, async () => {
    const p = await place("sealed");
    try {
      const [oldKey, key] = [newKey(), newKey()];
      const seeding = await openAt(p, aliceKeyring(oldKey));
      const { alice, bob } = await seedOwners(seeding);
      await compact(seeding, alice, bob);
      const { alice: contextSession } = await seedContext(seeding);
      assert.deepEqual(await found(seeding, alice), [ALL, ALL, ALL]);
      await seeding.close();
      // Six messages, one summary, three blocks (the block, the prompt, the directory), three entries.
      assert.deepEqual(await sealedUnder(p, oldKey), [6, 1, 3, 3]);

      const store = await openAt(p, aliceKeyring(key, [oldKey]));
      const stop = new AbortController();
      await assert.rejects(
        store.rekey("alice", { batchSize: 4, signal: stop.signal, onProgress: () => stop.abort() }),
        { name: "AbortError" },
      );
      assert.deepEqual(await sealedUnder(p, key), [4, 0, 0, 0], "one batch of messages re-sealed");
      // Halfway a search hashes its terms under both keys: the rows under each are found.
      assert.deepEqual(await found(store, alice), [ALL, ALL, ALL]);
      // A keyring that dropped the old key before the rotation ended cannot hash a search for the rows under it.
      const early = await openAt(p, aliceKeyring(key));
      await assert.rejects(early.searchMessages(SECRET, { owner: "alice" }), { code: "DECRYPT_FAILED" });
      await early.close();

      const report = await store.rekey("alice", { batchSize: 4 });
      assert.deepEqual([report.resumed, report.total, report.resealed], [true, 6, 2]);
      assert.deepEqual(await sealedUnder(p, oldKey), [0, 0, 0, 0], "nothing is left under the old key");
      assert.deepEqual(await sealedUnder(p, key), [6, 1, 3, 3]);
      assert.deepEqual(await found(store, alice), [ALL, ALL, ALL]);
      await store.close();

      // The old key dropped: everything reads and every message is found under the new key's tokens alone.
      const rotated = await openAt(p, aliceKeyring(key));
      assert.deepEqual(await found(rotated, alice), [ALL, ALL, ALL]);
      assert.equal(
        (await rotated.searchMessages("alice number", { sessionId: alice, match: "all" })).length,
        6,
        "phrases of words re-indexed under the new key",
      );
      await assertSummariesReadBack(rotated, alice, bob);
      await assertAliceReads(rotated, contextSession);
      assert.equal((await rotated.searchMessages("plain", { sessionId: bob })).length, 1, "bob in clear");
      await rotated.close();
      // The old key alone opens none of it.
      const old = await openAt(p, aliceKeyring(oldKey));
      await assert.rejects(old.session(alice).getCompactions(), { code: "DECRYPT_FAILED" });
      await assert.rejects(old.blocks.getBlock(`memory_${contextSession}`), { code: "DECRYPT_FAILED" });
      await old.close();
    } finally {
      await done(p);
    }
  });
};

await onEveryPlace(sealedRekeyCases);
