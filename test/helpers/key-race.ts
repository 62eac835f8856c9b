// The keyless contract's key race (src/testing/privacy/key-race.ts) on SQLite and a Postgres pool: a store without a
// keyring whose next write, once armed, is held on its connection until another store, opened with the owner's key,
// recorded that key. No timing: the hold is a hook on the statements the store sends.
import type pg from "pg";
import { PostgresStore, type PostgresStoreOptions } from "../../src/postgres/index.js";
import type { SqlDriver } from "../../src/sql/engines/sqlite/driver.js";
import type { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import type { KeyRace } from "../../src/testing/privacy/key-race.js";

// A statement that writes (not a look-up, which only reads): on Citus also the routed append's delegated call and the
// owner guard a write in clear calls before it in its transaction (postgres/citus/).
const WRITES = /\b(INSERT|UPDATE|DELETE|REPLACE|agent_append_v\d+|agent_owner_guard_v\d+)\b/i;
// The owner's lock a bulk write in clear takes before its rows (sql/sealing/postgres-clear-owners.ts), and a key look-up.
const LOCKS = /pg_advisory_xact_lock_shared/;
const LOOK_UP = /agent_owner_keys/;

/**
 * SQLite: `plain` (no keyring) holds its next write transaction, or its next write statement outside one, until
 * `keyed` recorded `owner`'s key as its first sealed write does (in a transaction of its own). A SQLite write
 * transaction holds the write lock from its start, so no other writer gets in after it began: a look-up in the
 * write's transaction sees the key, one before it does not.
 */
export function sqliteRace(plain: SqliteStore, keyed: SqliteStore, owner: string): KeyRace {
  let armed = false;
  const fire = () => {
    if (!armed) return;
    armed = false;
    keyed.driver.transaction(() => keyed.driver.keys?.ownerKey(owner, true));
    void keyed.close();
  };
  const driver = plain.driver as { -readonly [K in keyof SqlDriver]: SqlDriver[K] };
  const transaction = driver.transaction;
  driver.transaction = (fn) => {
    fire();
    return transaction(fn);
  };
  for (const name of ["run", "runChanges", "get", "all", "tuples"] as const) {
    const statement = driver[name] as ((sql: string, params?: unknown[]) => unknown) | undefined;
    if (!statement) continue;
    (driver as unknown as Record<string, unknown>)[name] = (sql: string, params?: unknown[]) => {
      if (WRITES.test(sql)) fire();
      return statement(sql, params);
    };
  }
  return {
    store: plain,
    arm: () => {
      armed = true;
    },
  };
}

/**
 * Postgres over a pg pool: a store without a keyring, over a wrapper of `pool`, whose next write statement (in a
 * transaction or not; `afterLookUp`: the first after its next key look-up) waits until a store opened with `keyring`
 * registered a named session of `owner` (its first sealed write: the name is sealed, the key recorded) and committed.
 */
export async function postgresRace(
  pool: pg.Pool,
  options: PostgresStoreOptions,
  keyring: Keyring,
  owner: string,
): Promise<KeyRace> {
  let armed = false;
  let waitLookUp = false;
  const fire = async () => {
    if (!armed) return;
    armed = false;
    const keyed = await PostgresStore.open(pool, { ...options, keyring });
    try {
      await keyed.registry.create({ id: `${owner}-first-key`, name: "first", owner });
    } finally {
      await keyed.close();
    }
  };
  const held =
    (queryable: { query: (...args: unknown[]) => unknown }) =>
    async (...args: unknown[]) => {
      const first = args[0] as string | { text: string };
      const sql = typeof first === "string" ? first : first.text;
      // A bulk write's lock of the owner is where its guard starts, whether or not it looked the key up first.
      if (LOCKS.test(sql) || (WRITES.test(sql) && !waitLookUp)) await fire();
      if (armed && LOOK_UP.test(sql)) waitLookUp = false;
      return queryable.query(...args);
    };
  const wrapped = new Proxy(pool, {
    get(target, prop) {
      if (prop === "query") return held(target as never);
      if (prop === "connect") {
        return async () => {
          const client = await target.connect();
          return new Proxy(client, {
            get(c, p) {
              if (p === "query") return held(c as never);
              const value = Reflect.get(c, p, c);
              return typeof value === "function" ? value.bind(c) : value;
            },
          });
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const store = await PostgresStore.open(wrapped, options);
  return {
    store,
    arm: (afterLookUp) => {
      armed = true;
      waitLookUp = afterLookUp === true;
    },
  };
}
