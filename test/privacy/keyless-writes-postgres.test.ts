// The keyless contract (agent-session/testing, runKeylessContract) on PGlite, the test server and a Citus
// cluster: a store without alice's key refuses every write and search of hers, no page (on any node) holds a
// refused write (docs/PRIVACY.md, "Refusals").
import { after, describe, it } from "node:test";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import { PostgresStore } from "../../src/postgres/index.js";
import { POSTGRES_OWNER_DATA } from "../../src/sql/owner-data/postgres.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { runKeylessContract } from "../../src/testing/index.js";
import { citusPool, citusUnavailable, markersOnCluster } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { postgresRace } from "../helpers/key-race.js";
import { markersInRelations, total } from "../helpers/purge.js";
import { postgresRowsHolding } from "../helpers/rows-holding.js";

let n = 0;

describe("PGlite", { skip: pgliteSwitchedOff() ?? false }, () => {
  runKeylessContract(
    { describe, it },
    {
      name: "PGlite",
      declaration: POSTGRES_OWNER_DATA,
      create: async () => {
        const db = await newPGlite({ extensions: { pageinspect } });
        return {
          open: (keyring) =>
            PostgresStore.open(db, { schema: "keyless", changeLog: true, ...(keyring ? { keyring } : {}) }),
          traces: async (text) => total(await markersInRelations(db, "keyless", text)),
          rowsHolding: postgresRowsHolding(db, "keyless"),
          close: () => db.close(),
        };
      },
    },
  );
});

for (const [label, reason, poolOf, distributed] of [
  ["Postgres", await postgresUnavailable(), testPool, false],
  ["Citus", await citusUnavailable(), citusPool, true],
] as const) {
  if (reason) {
    console.log(`Skipping the keyless contract on ${label}: ${reason}`);
    continue;
  }
  const pool = poolOf(4);
  after(() => pool.end());
  runKeylessContract(
    { describe, it },
    {
      name: label,
      declaration: POSTGRES_OWNER_DATA,
      create: async () => {
        const schema = `agent_session_keyless_${process.pid}_${n++}`;
        await dropSchema(pool, schema);
        return {
          open: (keyring) =>
            PostgresStore.open(pool, {
              schema,
              distributed,
              changeLog: true,
              ...(keyring ? { keyring } : {}),
            }),
          traces: async (text) =>
            total(await (distributed ? markersOnCluster : markersInRelations)(pool, schema, text)),
          rowsHolding: postgresRowsHolding(pool, schema),
          race: (keyring: Keyring, owner: string) =>
            postgresRace(pool, { schema, distributed, changeLog: true }, keyring, owner),
          close: () => dropSchema(pool, schema),
        };
      },
    },
  );
}
