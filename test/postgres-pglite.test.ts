// The storage contract on PGlite (Postgres compiled to WASM, in-process). One instance for the whole file:
// creating one costs seconds, TRUNCATE between tests costs milliseconds.
import assert from "node:assert/strict";
import { after, describe, it, test } from "node:test";
import {
  PostgresContextProvider,
  PostgresSearchProvider,
  PostgresSessionProvider,
  PostgresStore,
} from "../src/postgres/index.js";
import { tableNames } from "../src/sql/engines/postgres/tables.js";
import { ids, msg } from "../src/testing/contract/harness.js";
import { runProviderContract } from "../src/testing/index.js";
import { newPGlite } from "./fixtures/pglite.js";
import { checkTree, pgliteSwitchedOff, truncateAll } from "./fixtures/postgres-db.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

/** The contract and the PGlite-specific checks, on one instance. */
async function onPglite(): Promise<void> {
  const db = await newPGlite();
  const options = { schema: "agent_session" };
  const t = tableNames(options);
  await PostgresStore.open(db, options);
  after(() => db.close());

  runProviderContract(runner, {
    name: "postgres (PGlite)",
    create: async (policy) => {
      await truncateAll(db, t);
      return new PostgresStore(db, { ...options, ...policy });
    },
    reopen: async (store) => {
      await store.close();
      return PostgresStore.open(db, options);
    },
  });

  describe("PGlite: transactions, providers and tree invariants", () => {
    test("interleaved appends, deletes and updates keep the tree and the head cache consistent", async () => {
      await truncateAll(db, t);
      const s = new PostgresStore(db, options).session("p");
      await Promise.all(Array.from({ length: 30 }, (_, i) => s.appendMessage(msg(`m${i}`))));
      await Promise.all([
        s.deleteMessages(["m0", "m7", "m8", "m20"]),
        s.appendMessage(msg("b1"), "m3"),
        s.updateMessage(msg("m10", "a much longer text than before ".repeat(5))),
        s.appendMessage(msg("m30")),
      ]);
      await checkTree(db, t, "p");
      assert.equal((await s.getLatestLeaf())?.id, "m30");
    });

    test("the reference providers accept a PGlite instance", async () => {
      await truncateAll(db, t);
      const session = new PostgresSessionProvider(db, "x", options);
      await session.appendMessage(msg("a", "pglite works"));
      assert.deepEqual(ids(await session.searchMessages("works")), ["a"]);
      const block = new PostgresContextProvider(db, "memory", options);
      await block.set("kept");
      assert.equal(await block.get(), "kept");
      const search = new PostgresSearchProvider(db, undefined, options);
      search.init("docs");
      await search.set("k", "Résumé tips");
      assert.equal(await search.search("resume"), "[k]\nRésumé tips");
      assert.equal(await search.get(), "1 entries indexed.");
    });
  });
}

// .ci/run runs this file alone on Node 24, the Node we design for, and leaves it out of the Node 20 run (~7 minutes
// of a loaded 2-core machine there): PGlite's engine is the same WebAssembly on either Node, and the other PGlite
// cases (vectors, facts, layouts, encryption) still run on Node 20.
const elsewhere =
  process.env.AGENT_SESSION_PGLITE_CONTRACT === "alone"
    ? "AGENT_SESSION_PGLITE_CONTRACT=alone: the storage contract on PGlite runs in a step of its own"
    : null;
const off = pgliteSwitchedOff() ?? elsewhere;
if (off) {
  console.log(`# skipping the storage contract on PGlite: ${off}`);
  test("the storage contract on PGlite", { skip: off }, () => undefined);
} else await onPglite();
