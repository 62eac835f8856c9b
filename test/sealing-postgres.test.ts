// The Postgres keys' snapshot loader (src/sql/sealing/postgres.ts, key-snapshot.ts): an operation whose records keep
// missing past the loads it may take is refused with a SessionError (STORAGE), never the loader's internal signal.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { SessionError } from "../src/errors.js";
import { PostgresStore } from "../src/postgres/index.js";
import { tableNames } from "../src/sql/engines/postgres/tables.js";
import { MAX_LOADS, postgresKeys } from "../src/sql/sealing/postgres.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";
import { randomKeyring } from "./helpers/encryption.js";

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the Postgres key loader tests: ${unavailable}`);

describe("Postgres keys: the snapshot loader", { skip: unavailable ?? false }, () => {
  const pool = unavailable ? undefined : testPool(2);
  const schema = `agent_session_keyload_${process.pid}`;
  after(async () => {
    if (!pool) return;
    await dropSchema(pool, schema);
    await pool.end();
  });

  test("an operation that misses more records than MAX_LOADS is STORAGE, and one within them runs", async () => {
    const db = pool!;
    await dropSchema(db, schema);
    const keyring = randomKeyring(["alice"]);
    await (await PostgresStore.open(db, { schema, keyring })).close();
    const keys = postgresKeys(keyring, tableNames({ schema }));
    const query = async <T>(sql: string, params?: readonly unknown[]) =>
      (await db.query(sql, params as unknown[])).rows as T[];
    // Each session's owner is a record of its own: one load each.
    const owners = (count: number) => (k: typeof keys.keys) =>
      Array.from({ length: count }, (_, i) => k.keyFor(`s${i}`, false));
    assert.deepEqual(await keys.run(query, owners(MAX_LOADS)), new Array(MAX_LOADS).fill(null));
    await assert.rejects(
      keys.run(query, owners(MAX_LOADS + 2)),
      (error: unknown) => error instanceof SessionError && error.code === "STORAGE",
    );
  });
});
