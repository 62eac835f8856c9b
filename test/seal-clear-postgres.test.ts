// Sealing an owner's clear history on Postgres (a server, PGlite, a Citus cluster; docs/PRIVACY.md "Sealing an
// owner's clear history"): alice's messages, summary, block, entry, facts and stream chunks, written before she had
// a key, are sealed by rekey(owner, { sealClear: true }), stopped after one batch and resumed; then no row of any
// table holds their words (search vectors included) and, on the server after a purge, no page does; everything
// reads and searches the same with the keyring, and a store without it refuses her. Bob stays in clear.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { FeedCapableStore } from "../src/contract/feed.js";
import { PostgresStore } from "../src/postgres/index.js";
import type { Keyring } from "../src/store/crypto/keyring.js";
import { markersInRelations, total } from "./helpers/purge.js";
import { aliceKeyring, newKey, onEveryPlace, openAt, type Place } from "./helpers/rekey-places.js";
import {
  type ClearStore,
  refusesAlice,
  replayedSummaries,
  rotatesAndSeals,
  sealInterrupted,
  seedClear,
  snapshot,
  WORDS,
} from "./helpers/seal-clear.js";

/** A store on the place with the change log (its compaction rows hold the overlay's summary). */
const openLogged = (p: Place, keyring?: Keyring) =>
  PostgresStore.open(p.db, {
    schema: p.schema,
    changeLog: true,
    ...(keyring ? { keyring } : {}),
    ...(p.distributed ? { distributed: true } : {}),
  }) as unknown as Promise<ClearStore>;

/** Rows of any table of the place's schema whose text (every column, search vectors, bytea as hex) holds `word`. */
async function rowsHolding(p: Place, word: string): Promise<number> {
  const { rows: tables } = await p.db.query(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
    [p.schema],
  );
  let n = 0;
  for (const { table_name } of tables as { table_name: string }[]) {
    const { rows } = await p.db.query(
      `SELECT count(*)::int AS n FROM "${p.schema}"."${table_name}" t
       WHERE strpos(t::text, $1) > 0 OR strpos(t::text, $2) > 0`,
      // A bytea column's text is its hex (checkpoint rows): the word's bytes are found as their hex too.
      [word, Buffer.from(word).toString("hex")],
    );
    n += (rows[0] as { n: number }).n;
  }
  return n;
}

await onEveryPlace((backend, place, done) => {
  test(`${backend}: sealClear with a new key rotates the sealed rows and seals the clear ones in one run`, async () => {
    const p = await place("seal_rotate");
    try {
      const open = async (keyring?: Keyring) => (await openAt(p, keyring)) as unknown as ClearStore;
      await rotatesAndSeals(open, aliceKeyring, [newKey(), newKey()]);
    } finally {
      await done(p);
    }
  });

  test(`${backend}: sealClear seals an owner's clear history, resumable, and no row keeps its words`, async () => {
    const p = await place("seal_clear");
    try {
      const plain = await openLogged(p);
      let seeded: Awaited<ReturnType<typeof seedClear>>;
      try {
        seeded = await seedClear(plain);
      } finally {
        await plain.close();
      }
      const { alice, snapshot: before } = seeded;
      assert.ok((await rowsHolding(p, WORDS.message)) > 0, "the check reads what it should");
      const key = newKey();
      const store = await openLogged(p, aliceKeyring(key));
      try {
        assert.deepEqual(await snapshot(store, alice), before, "a keyring with her key reads her clear rows");
        const report = await sealInterrupted(store, seeded);
        assert.equal(report.total, 7);
        assert.deepEqual(await snapshot(store, alice), before, "reads and searches are the same");
        const again = await store.rekey("alice", { sealClear: true });
        assert.deepEqual([again.resealed, again.resumed], [0, false], "a second run seals nothing");
        for (const [kind, word] of Object.entries(WORDS)) {
          assert.equal(await rowsHolding(p, word), 0, `no row holds a ${kind} word`);
        }
        assert.ok((await rowsHolding(p, "bob plain words")) > 0, "bob, without a key, stays in clear");
        if (backend === "Postgres") {
          await store.purge();
          await p.db.query("CHECKPOINT");
          for (const [kind, word] of Object.entries(WORDS)) {
            const pages = await markersInRelations(p.db, p.schema, word);
            assert.equal(total(pages), 0, `no page holds a ${kind} word: ${JSON.stringify(pages)}`);
          }
        }
      } finally {
        await store.close();
      }
      const keyless = (await openAt(p)) as unknown as ClearStore;
      try {
        await refusesAlice(keyless, alice);
      } finally {
        await keyless.close();
      }
      const reopened = await openLogged(p, aliceKeyring(key));
      try {
        assert.deepEqual(await snapshot(reopened, alice), before);
        const feed = await replayedSummaries(reopened as unknown as FeedCapableStore, 2);
        const summaries = [`alice summary ${WORDS.summary}`, `~sealed look-alike ${WORDS.summary}`];
        assert.deepEqual(feed, summaries, "the change log's rows open for the feed");
      } finally {
        await reopened.close();
      }
    } finally {
      await done(p);
    }
  });
});
