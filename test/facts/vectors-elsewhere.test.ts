// Facts learned elsewhere (docs/FACTS.md#recall): store B, without a vector channel (a learner process), stores
// facts; store A, with one, over the same SQLite file (each driver on either side) or Postgres schema (both with a
// change log, as Postgres needs for any write of another process), embeds them by itself: no write of its own, no
// backfill. A SQLite commit elsewhere moves A's data version; a Postgres fact write logs a row per source session.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { FactCapableStore } from "../../src/contract/facts.js";
import type { ChangeEvent } from "../../src/contract/feed.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { logNames } from "../../src/sql/change-log/postgres-append-log.js";
import { loadNodeSqlite } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import type { SqliteDriverName } from "../../src/sql/engines/sqlite/open.js";
import { fact, ownedSession } from "../../src/testing/contract/facts-harness.js";
import { testEmbedder } from "../vectors/embedder.js";
import { channel, describeTargets, until, withStorage } from "../vectors/helpers.js";
import type { VectorStore } from "../vectors/targets.js";

type Store = VectorStore & FactCapableStore & RegistryCapableStore;

const nodeSqlite = loadNodeSqlite() !== undefined;

/** The engines of A and B on a SQLite file: each on either side where node:sqlite exists. */
const PAIRS: [SqliteDriverName, SqliteDriverName][] = nodeSqlite
  ? [
      ["better-sqlite3", "node:sqlite"],
      ["node:sqlite", "better-sqlite3"],
    ]
  : [["better-sqlite3", "better-sqlite3"]];
if (!nodeSqlite)
  console.log(`# facts learned elsewhere: node:sqlite needs Node.js >= 22.13 (${process.version})`);

/**
 * On Postgres a fact write's log rows hold no ids or data, each tied to a session of the facts' sources (so an erasure
 * of the session deletes it), and are no subscriber's event: a replay of the whole log holds the session's appends only.
 */
async function noFactEvents(store: PostgresStore): Promise<void> {
  const executor = await store.ready();
  const rows = await executor.query<{ session_id: string; ids: string; data: string | null }>(
    `SELECT session_id, ids, data FROM ${logNames(store.tables).table} WHERE kind = 'facts'`,
  );
  assert.deepEqual(
    rows,
    Array.from({ length: 3 }, () => ({ session_id: "a", ids: "[]", data: null })),
  );
  const events: ChangeEvent[] = [];
  const stop = store.subscribe((event) => void events.push(event), { after: 0 });
  await until(() => events.length >= 2);
  await new Promise((resolve) => setTimeout(resolve, 100));
  stop();
  assert.deepEqual(
    events.map((event) => event.type),
    ["append", "append"],
  );
}

await describeTargets((target) => {
  const file = target.name.startsWith("sqlite file");
  const postgres = /postgres|PGlite/.test(target.name);
  // Two stores on one connection (a handle, a sql tag) or in one object (memory) are no two writers.
  const skip = file || postgres ? undefined : "one connection: no other writer to hear";
  const pairs: (readonly [object, object])[] = file
    ? PAIRS.map(([a, b]) => [{ driver: a }, { driver: b }] as const)
    : [[{ changeLog: true }, { changeLog: true }]];
  for (const [a, b] of pairs) {
    const name = file
      ? ` (A ${(a as { driver: string }).driver}, B ${(b as { driver: string }).driver})`
      : "";
    test(`facts another store stores are embedded without a write or backfill here${name}`, {
      skip,
    }, async () => {
      await withStorage(target.fresh, async (storage) => {
        const here = (await storage.open({ embedder: testEmbedder().embed, ...a })) as Store;
        const elsewhere = (await storage.open({ ...b })) as Store;
        try {
          assert.equal(elsewhere.vectors, undefined);
          // A's channel is in use (its tables made) before the other store writes anything.
          assert.equal((await channel(here).status()).facts, undefined);
          await ownedSession(elsewhere, "a", "o", ["Guess what I got at the dealership today", "Busy week"]);
          const start = Date.now();
          await elsewhere.facts.add({ sessionId: "a" }, [
            fact("The user bought a new sedan.", [["a", "a-0"]]),
          ]);
          await elsewhere.facts.add({ owner: "o" }, [fact("The user had a busy week.", [["a", "a-1"]])]);
          await until(async () => (await channel(here).status()).facts?.embedded === 2);
          console.log(`${target.name}${name}: embedded ${Date.now() - start} ms after the first add`);
          assert.deepEqual((await channel(here).status()).facts, { embedded: 2, pending: 0, failed: 0 });
          // Later writes too: each is heard, not only the first.
          await elsewhere.facts.add({ sessionId: "a" }, [fact("The user likes pasta.", [["a", "a-1"]])]);
          await until(async () => (await channel(here).status()).facts?.embedded === 3);
          if (here instanceof PostgresStore) await noFactEvents(here);
        } finally {
          await elsewhere.close();
          await here.close();
        }
      });
    });
  }
});
