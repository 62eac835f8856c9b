import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { PostgresSessionStorage, type SessionStorage } from "../../src/agent/index.js";
import type { PostgresConnection } from "../../src/postgres/index.js";
import { runStorageContract } from "../../src/testing/index.js";
import { sampleState } from "../../src/testing/storage/fixtures.js";
import { newPGlite } from "../fixtures/pglite.js";
import { PG_URL, pgliteSwitchedOff } from "../fixtures/postgres-db.js";
import { serverSkip } from "./helpers/servers.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

const URL = PG_URL;
const skip = await serverSkip("PostgreSQL", "127.0.0.1", 5432);

// Every storage gets its own schema, so runs in parallel (and other suites on the same server) never collide.
let counter = 0;
const schemas = new WeakMap<SessionStorage, string>();
const created: string[] = [];
const schema = () => {
  const name = `agent_store_t${process.pid}_${++counter}`;
  created.push(name);
  return name;
};

const admin = skip === false ? new pg.Pool({ connectionString: URL, max: 2 }) : undefined;
after(async () => {
  if (!admin) return;
  for (const name of created) {
    await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  }
  await admin.end();
});

runStorageContract(runner, {
  name: "PostgresSessionStorage (URL, own pool)",
  skip,
  create: async () => {
    const name = schema();
    const storage = new PostgresSessionStorage(URL, { schema: name });
    schemas.set(storage, name);
    return storage;
  },
  reopen: async (storage) => new PostgresSessionStorage(URL, { schema: schemas.get(storage)! }),
});

const clients = new WeakMap<SessionStorage, pg.Client>();
runStorageContract(runner, {
  name: "PostgresSessionStorage (user pg.Client)",
  skip,
  create: async () => {
    const client = new pg.Client({ connectionString: URL });
    await client.connect();
    const storage = new PostgresSessionStorage(client, { schema: schema() });
    clients.set(storage, client);
    return storage;
  },
  destroy: async (storage) => {
    await storage.close?.();
    await clients.get(storage)!.end();
  },
});

// The reference's connection shape (`execute(query, args)` with `?` placeholders), as its own adapter wraps a pg
// Client: code written for the reference hands this to every Postgres entry point, agent storage included.
const executes = new WeakMap<SessionStorage, pg.Client>();
runStorageContract(runner, {
  name: "PostgresSessionStorage (the reference's PostgresConnection)",
  skip,
  create: async () => {
    const client = new pg.Client({ connectionString: URL });
    await client.connect();
    const connection: PostgresConnection = {
      async execute(query, args) {
        let index = 0;
        const text = query.replace(/\?/g, () => `$${++index}`);
        return { rows: (await client.query(text, args ?? [])).rows };
      },
    };
    const storage = new PostgresSessionStorage(connection, { schema: schema() });
    executes.set(storage, client);
    return storage;
  },
  destroy: async (storage) => {
    await storage.close?.();
    await executes.get(storage)!.end();
  },
});

// PGlite speaks the same `query` API in-process; one instance, a fresh schema per storage.
let lite: PGlite | undefined;
let liteCounter = 0;
describe("PGlite", { skip: pgliteSwitchedOff() ?? false }, () => {
  runStorageContract(runner, {
    name: "PostgresSessionStorage (PGlite)",
    create: async () => {
      lite ??= await newPGlite();
      return new PostgresSessionStorage(lite, { schema: `lite_${++liteCounter}` });
    },
  });
});
after(async () => lite?.close());

describe("PostgresSessionStorage specifics", { skip }, () => {
  it("a user pool stays open after close(); a URL pool is ended", async () => {
    const pool = new pg.Pool({ connectionString: URL, max: 2 });
    const storage = new PostgresSessionStorage(pool, { schema: schema() });
    await storage.save(sampleState());
    await storage.close();
    assert.equal((await pool.query("SELECT 1 AS one")).rows[0].one, 1);
    await pool.end();
  });

  it("an unreachable server surfaces as a STORAGE error, not a hang or a crash", async () => {
    const storage = new PostgresSessionStorage({ host: "127.0.0.1", port: 1, connectionTimeoutMillis: 500 });
    await assert.rejects(storage.list(), (error: { code?: string }) => error.code === "STORAGE");
    await storage.close();
  });

  it("refuses a table prefix that is not a plain identifier", () => {
    assert.throws(() => new PostgresSessionStorage(URL, { tablePrefix: "x; DROP TABLE y" }), {
      code: "INVALID_ARGUMENT",
    });
  });
});
