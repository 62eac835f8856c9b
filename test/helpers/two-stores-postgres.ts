// What the Postgres key-guard tests share (encryption-clear-guard-postgres, encryption-owner-guard-postgres): two
// keyring stores on one database (PGlite or the test server), as two processes would be, the rows a session holds
// (sealed or not) and the statements sent so far.
import { after, describe, test } from "node:test";
import type pg from "pg";
import { PostgresStore } from "../../src/postgres/index.js";
import type { PostgresSource } from "../../src/sql/engines/postgres/client.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { citusPool, citusUnavailable } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { randomKeyring } from "./encryption.js";

type Rows = (sql: string) => Promise<{ id: string; sealed: boolean }[]>;

/** The layout under test: a source stores share, its rows' ids and whether sealed, statements sent so far. */
export interface Place {
  source: PostgresSource;
  schema: string;
  rows: Rows;
  statements: () => number;
  /** The stores are opened distributed (a Citus cluster). */
  distributed?: boolean;
  /** Drops what the test made (PGlite: closes the database). */
  done: () => Promise<void>;
}

/** Counts `target`'s calls of `methods` (what a store sends its statements through) from now on. */
function counted(target: object, methods: readonly string[]): () => number {
  let statements = 0;
  for (const method of methods) {
    const record = target as Record<string, (...args: unknown[]) => unknown>;
    const original = record[method]!.bind(target);
    record[method] = (...args: unknown[]) => {
      statements++;
      return original(...args);
    };
  }
  return () => statements;
}

/** A new in-process PGlite database, its stores in schema `schema`. */
export async function pglitePlace(schema: string): Promise<Place> {
  const db = await newPGlite();
  const rows: Rows = async (sql) => (await db.query<{ id: string; sealed: boolean }>(sql)).rows;
  return { source: db, schema, rows, statements: counted(db, ["query", "exec"]), done: () => db.close() };
}

/**
 * Places on the test server (or, `distributed`, the Citus cluster) through `pool`, counting every statement its
 * clients send (in a transaction or not); each place's schemas (`schema` and `schema_plain`) are dropped before and
 * by `done`.
 */
export function serverPlaces(pool: pg.Pool, distributed = false): (schema: string) => Promise<Place> {
  let sent = 0;
  pool.on("connect", (client) => {
    const original = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as Record<string, unknown>).query = (...args: unknown[]) => {
      sent++;
      return original(...args);
    };
  });
  return async (schema) => {
    const drop = async () => {
      for (const name of [schema, `${schema}_plain`]) await dropSchema(pool, name);
    };
    await drop();
    const rows: Rows = async (sql) => (await pool.query<{ id: string; sealed: boolean }>(sql)).rows;
    return { source: pool, schema, rows, statements: () => sent, distributed, done: drop };
  };
}

/** A store on `place` (in schema `schema`, default the place's), with `keyring` when given. */
export const open = (place: Place, keyring?: Keyring, schema = place.schema) =>
  PostgresStore.open(place.source, {
    schema,
    ...(keyring ? { keyring } : {}),
    ...(place.distributed ? { distributed: true } : {}),
  });

/** The messages of session `sessionId` in `place`, in order: their ids and whether sealed. */
export const stored = (place: Place, sessionId: string) =>
  place.rows(
    `SELECT m.id, m.content LIKE '~sealed%' AS sealed FROM "${place.schema}".agent_messages m
     JOIN "${place.schema}".agent_session_heads h ON h.num = m.session_num${
       // Citus joins the two on their distribution column only.
       place.distributed ? " AND h.session_id = m.session_id" : ""
     }
     WHERE h.session_id = '${sessionId}' ORDER BY m.seq`,
  );

/** A store's keyring: random keys for these owners, a keyring as it is, or none (undefined). */
type Ring = string[] | Keyring | undefined;
const ringOf = (ring: Ring) => (Array.isArray(ring) ? randomKeyring(ring) : ring);

/** Runs `use` with two stores on `place`, A opened with keyring `aRing` and B with `bRing`. */
export async function twoStores(
  place: Place,
  aRing: Ring,
  bRing: Ring,
  use: (a: PostgresStore, b: PostgresStore) => Promise<void>,
) {
  const a = await open(place, ringOf(aRing));
  const b = await open(place, ringOf(bRing));
  try {
    await use(a, b);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

/** A scenario of a test file, run on each place. */
export type PlaceCase = [title: string, run: (place: Place) => Promise<void>];

/**
 * Registers `cases` on PGlite, on the test server and, with `citus`, on the Citus cluster, under `what` (a server
 * not there skips its cases, said once); `name` names their schemas. Await it before registering any other test.
 */
export async function describePlaces(what: string, name: string, cases: PlaceCase[], citus = false) {
  const servers = [
    { label: "Postgres", reason: await postgresUnavailable(), pool: testPool, distributed: false },
    ...(citus
      ? [{ label: "Citus", reason: await citusUnavailable(), pool: citusPool, distributed: true }]
      : []),
  ];
  describe(`PGlite: ${what}`, { skip: pgliteSwitchedOff() ?? false }, () => {
    for (const [title, run] of cases) {
      test(title, async () => {
        const place = await pglitePlace(`${name}_guard`);
        await run(place).finally(place.done);
      });
    }
  });
  for (const { label, reason, pool: poolOf, distributed } of servers) {
    if (reason) console.log(`Skipping the ${label} ${name}-guard tests: ${reason}`);
    describe(`${label}: ${what}`, { skip: reason ?? false }, () => {
      const pool = reason ? undefined : poolOf(4);
      after(() => pool?.end());
      const place = pool ? serverPlaces(pool, distributed) : undefined;
      const prefix = distributed ? `agent_session_citus_${name}` : `agent_session_${name}`;
      cases.forEach(([title, run], i) => {
        test(title, async () => {
          const p = await place!(`${prefix}_${i}_${process.pid}`);
          await run(p).finally(p.done);
        });
      });
    });
  }
}
