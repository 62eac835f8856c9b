// The statements each operation of a LangGraph store's items sends to the Postgres server (sql/graph-store/, one
// statement table written once for both engines over the rooms' engine), held so they cannot creep up unseen. Exact
// counts, not a timing: lower them when a change removes a statement.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { GraphItemDraft } from "../../src/contract/graph-items.js";
import { PostgresStore } from "../../src/postgres/index.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { inOwnSchema, postgresUnavailable } from "../fixtures/postgres-db.js";
import { counted } from "../helpers/round-trips.js";

const key = new Uint8Array(32).fill(7);
// carol is encrypted, bob in clear.
const keyring: Keyring = { key: (owner) => (owner === "carol" ? key : undefined), previousKeys: () => [] };
const item = (owner: string, k: string, ttlMs: number | null = null): GraphItemDraft => ({
  owner,
  namespace: `${owner}.mem`,
  key: k,
  value: JSON.stringify({ k }),
  fields: null,
  ttlMs,
});

const reason = await postgresUnavailable();
if (reason) console.log(`Skipping the graph items' round trips on Postgres: ${reason}`);
test("Postgres: each graph item operation sends the statements it sends today", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema("gi_trips", async (pool, schema) => {
    const store = await PostgresStore.open(pool, { schema, keyring });
    const items = store.graphItems;
    const now = Date.now();
    await items.write([item("carol", "warm")], [], now); // carol's key recorded and cached
    const counts = {
      // One transaction: BEGIN, the delete, one statement of the owners' keys looked up in it, two upserts, COMMIT.
      write: await counted(() =>
        items.write([item("carol", "a", 1000), item("bob", "b")], [item("carol", "warm")], now),
      ),
      get: await counted(() => items.get("carol", "carol.mem", "a", now, false)),
      // BEGIN, the refresh, the read, COMMIT.
      getRefreshed: await counted(() => items.get("carol", "carol.mem", "a", now, true)),
      page: await counted(() => items.page({ owner: "carol", prefix: "carol" }, null, now, 10)),
      namespaces: await counted(() => items.namespaces({ owner: null, prefix: "" }, null, now, 10)),
      refresh: await counted(async () =>
        items.refresh([(await items.get("carol", "carol.mem", "a", now, false))!], now),
      ),
      // The owners holding expired items, then each one's delete.
      sweep: await counted(() => items.sweep(now + 5000)),
      count: await counted(() => items.count()),
      erase: await counted(() => items.eraseOwner("carol")),
    };
    // refresh counts its item's read too: one statement, then BEGIN, the refresh, COMMIT.
    assert.deepEqual(counts, {
      write: 6,
      get: 1,
      getRefreshed: 4,
      page: 1,
      namespaces: 1,
      refresh: 4,
      sweep: 2,
      count: 1,
      erase: 1,
    });
    await store.close();
  });
});
