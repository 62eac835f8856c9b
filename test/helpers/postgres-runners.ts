// One check declared on PGlite and on the test server: the scaffolding the plan tests of the registry's indexes
// share (test/registry-owner.test.ts, test/registry-source.test.ts).
import { test } from "node:test";
import type { openExecutor } from "../../src/sql/engines/postgres/client.js";
import { newPGlite } from "../fixtures/pglite.js";
import {
  pgliteSwitchedOff,
  postgresUnavailable,
  type Runner,
  testClient,
  testPool,
} from "../fixtures/postgres-db.js";

/** A check on Postgres tables: `db` reads plans on one connection, `source` is what the store opens, in `schema`. */
export type PostgresCheck = (
  db: Runner,
  source: Parameters<typeof openExecutor>[0],
  schema: string,
) => Promise<void>;

/**
 * Declares `check` as two tests titled `PGlite: <title>` and `Postgres: <title>`: on an in-process PGlite (schema
 * `schema`), and on the test server (schema `<schema>_<pid>`, so concurrent runs do not collide), that one skipped
 * with the reason when the server is unreachable (an error under CI=true).
 */
export async function onPgliteAndPostgres(
  title: string,
  schema: string,
  check: PostgresCheck,
): Promise<void> {
  test(`PGlite: ${title}`, { skip: pgliteSwitchedOff() ?? false }, async () => {
    const db = await newPGlite();
    try {
      await check(db, db, schema);
    } finally {
      await db.close();
    }
  });
  const unavailable = await postgresUnavailable();
  test(`Postgres: ${title}`, { skip: unavailable ?? false }, async () => {
    const pool = testPool(2);
    const client = testClient();
    await client.connect();
    try {
      // The plan is read on one connection (a prepared statement lives in its session); the store uses the pool.
      await check(client, pool, `${schema}_${process.pid}`);
    } finally {
      await client.end();
      await pool.end();
    }
  });
}
