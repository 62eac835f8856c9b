// Where the Postgres key-rotation tests run (rekey-postgres*.test.ts): a server schema, PGlite and a Citus cluster
// schema, each skipped with its printed reason when unreachable; alice's keyring, and a store opened on a place.
import { after, describe } from "node:test";
import type { PGlite } from "@electric-sql/pglite";
import { PostgresStore } from "../../src/postgres/index.js";
import type { PostgresSource } from "../../src/sql/engines/postgres/client.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { citusPool, citusUnavailable } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import {
  dropSchema,
  pgliteSwitchedOff,
  postgresUnavailable,
  type Runner,
  testPool,
} from "../fixtures/postgres-db.js";

/** A random 32-byte key. */
export const newKey = () => crypto.getRandomValues(new Uint8Array(32));

/** A keyring for alice only: `key` current, `previous` the keys a rotation moves from. */
export function aliceKeyring(key: Uint8Array, previous: Uint8Array[] = []): Keyring {
  return {
    key: (owner) => (owner === "alice" ? key : undefined),
    previousKeys: (owner) => (owner === "alice" ? previous : []),
  };
}

/** Where a case runs: the database, a schema of its own, and the store options of its layout. */
export interface Place {
  db: Runner & PostgresSource;
  schema: string;
  distributed?: boolean;
}

/** A store on the place, with `keyring` when given. */
export const openAt = (p: Place, keyring?: Keyring) =>
  PostgresStore.open(p.db, {
    schema: p.schema,
    ...(keyring ? { keyring } : {}),
    ...(p.distributed ? { distributed: true } : {}),
  });

/** The cases a test file defines for one place: its name, how a case makes its place, and how it drops it. */
export type PlaceCases = (
  backend: string,
  place: (name: string) => Promise<Place>,
  done: (p: Place) => Promise<void>,
) => void;

/** Runs `cases` on a Postgres server, on PGlite and on a Citus cluster. */
export async function onEveryPlace(cases: PlaceCases): Promise<void> {
  const schemaPlace = (db: Runner & PostgresSource, distributed: boolean) => async (name: string) => {
    const p = {
      db,
      schema: `agent_session_rekey_${name}_${process.pid}`,
      ...(distributed ? { distributed } : {}),
    };
    await dropSchema(p.db, p.schema);
    return p;
  };
  const unavailable = await postgresUnavailable();
  if (unavailable) console.log(`Skipping the PostgreSQL server rekey tests: ${unavailable}`);
  describe("Postgres server", { skip: unavailable ?? false }, () => {
    const pool = unavailable ? undefined : testPool(4);
    after(() => pool?.end());
    cases(
      "Postgres",
      (name) => schemaPlace(pool!, false)(name),
      (p) => dropSchema(p.db, p.schema),
    );
  });
  describe("PGlite", { skip: pgliteSwitchedOff() ?? false }, () => {
    cases(
      "PGlite",
      async (name) => ({ db: (await newPGlite()) as unknown as Runner & PostgresSource, schema: name }),
      (p) => (p.db as unknown as PGlite).close(),
    );
  });
  // The same cases on a Citus cluster (docs/POSTGRES.md, "Past one server"): the key tables are reference tables.
  const noCitus = await citusUnavailable();
  if (noCitus) console.log(`Skipping the Citus rekey tests: ${noCitus}`);
  describe("Citus", { skip: noCitus ?? false }, () => {
    const pool = noCitus ? undefined : citusPool(4);
    after(() => pool?.end());
    cases(
      "Citus",
      (name) => schemaPlace(pool!, true)(name),
      (p) => dropSchema(p.db, p.schema),
    );
  });
}
