// Counting a Postgres or PGlite store's fact vectors (test/facts/vectors.test.ts).

import type { PostgresStore } from "../../src/postgres/store.js";
import { factTables } from "../../src/sql/facts/postgres.js";

/** Facts holding a vector on a Postgres store (0 before the column exists). */
export async function postgresFactVectors(store: unknown): Promise<number> {
  const pg = store as PostgresStore;
  const executor = await pg.ready();
  const { facts } = factTables(pg.tables);
  const [row] = await executor.query<{ n: string }>(
    `SELECT count(*) AS n FROM information_schema.columns WHERE column_name = 'embedding' AND table_name = 'agent_facts'${
      pg.tables.schema ? " AND table_schema = $1" : ""
    }`,
    pg.tables.schema ? [pg.tables.schema] : [],
  );
  if (Number(row?.n) === 0) return 0;
  const [count] = await executor.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${facts} WHERE cardinality(embedding) > 0`,
  );
  return Number(count?.n);
}
