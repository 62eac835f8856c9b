import assert from "node:assert/strict";
import { after, describe, it, test } from "node:test";
import { SessionManager } from "../src/manager/manager.js";
import {
  type PostgresConnection,
  PostgresContextProvider,
  PostgresSearchProvider,
  PostgresSessionProvider,
  PostgresStore,
} from "../src/postgres/index.js";
import { Session } from "../src/session/session.js";
import { toQuestionMarks } from "../src/sql/engines/postgres/reference-connection.js";
import { tableNames } from "../src/sql/engines/postgres/tables.js";
import { ids, msg } from "../src/testing/contract/harness.js";
import { runProviderContract } from "../src/testing/index.js";
import {
  dropSchema,
  postgresUnavailable,
  testClient,
  testPool,
  truncateAll,
} from "./fixtures/postgres-db.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

/**
 * The reference's own adapter (agents@0.22.0 `toPostgresConnection`): `?` placeholders, rewritten naively to
 * `$1…` for a pg client. This is what code written for the reference hands to the Postgres providers.
 */
function referenceConnection(client: {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}) {
  const statements: string[] = [];
  const connection: PostgresConnection = {
    async execute(query, args) {
      statements.push(query);
      let index = 0;
      const text = query.replace(/\?/g, () => `$${++index}`);
      return { rows: (await client.query(text, args ?? [])).rows as Record<string, unknown>[] };
    },
  };
  return { connection, statements };
}

describe("postgres connection shape: placeholder translation", () => {
  test("$n becomes ? in order, a repeated $n repeats its value, quoted text is left alone", () => {
    const { sql, order } = toQuestionMarks(
      `SELECT '$1', "$2", $$ $3 $$, $tag$ $1 $tag$ FROM t WHERE a = $2 AND b = $1 -- $3\n AND c = $2 /* $9 */`,
    );
    assert.equal(
      sql,
      `SELECT '$1', "$2", $$ $3 $$, $tag$ $1 $tag$ FROM t WHERE a = ? AND b = ? -- $3\n AND c = ? /* $9 */`,
    );
    assert.deepEqual(order, [1, 0, 1]);
  });

  test("a literal with a doubled quote does not end early", () => {
    assert.deepEqual(toQuestionMarks(`SELECT 'it''s $1', $1`), { sql: `SELECT 'it''s $1', ?`, order: [0] });
  });
});

describe("postgres connection shape: what a connection must be", () => {
  test("an execute() that answers without rows is a STORAGE error naming it, not a TypeError", async () => {
    for (const answer of [{}, undefined, { rows: "no" }]) {
      const provider = new PostgresSessionProvider({ execute: async () => answer } as never, "s");
      await assert.rejects(provider.getHistory(), { code: "STORAGE" });
    }
  });

  test("a provider over no connection at all is INVALID_ARGUMENT, not a TypeError", () => {
    for (const client of [undefined, null, 5]) {
      assert.throws(() => new PostgresContextProvider(client as never, "memory"), {
        code: "INVALID_ARGUMENT",
      });
      assert.throws(() => new PostgresSearchProvider(client as never), { code: "INVALID_ARGUMENT" });
      assert.throws(() => new PostgresSessionProvider(client as never), { code: "INVALID_ARGUMENT" });
    }
  });
});

const SCHEMA = `agent_session_test_conn_${process.pid}`;
const unavailable = await postgresUnavailable();

if (unavailable) {
  test("postgres connection shape", { skip: unavailable }, () => undefined);
} else {
  const pool = testPool(2);
  const client = testClient();
  await client.connect();
  const options = { schema: SCHEMA };
  const t = tableNames(options);
  await dropSchema(pool, SCHEMA);
  const { connection, statements } = referenceConnection(client);
  await PostgresStore.open(connection, options);
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await client.end();
    await pool.end();
  });

  runProviderContract(runner, {
    name: "postgres (the reference's execute() connection over a pg Client)",
    create: async (policy) => {
      await truncateAll(pool, t);
      return new PostgresStore(connection, { ...options, ...policy });
    },
    reopen: async (store) => {
      await store.close();
      return PostgresStore.open(connection, options);
    },
  });

  describe("postgres connection shape: the reference's providers and manager", () => {
    test("every statement reaches execute() with ? placeholders only", () => {
      assert.ok(statements.length > 0);
      for (const sql of statements) assert.doesNotMatch(sql.replace(/'[^']*'/g, ""), /\$\d/);
    });

    test("PostgresSessionProvider + Session, context and search providers work on the connection", async () => {
      await truncateAll(pool, t);
      const session = Session.create(new PostgresSessionProvider(connection, "chat", options))
        .withContext("memory", { provider: new PostgresContextProvider(connection, "memory_chat", options) })
        .withContext("notes", { provider: new PostgresSearchProvider(connection, undefined, options) });
      await session.appendMessage(msg("m1", "deploy on Friday"));
      await session.appendMessage(msg("m2", "noted", "assistant"));
      assert.deepEqual(ids(await session.getHistory()), ["m1", "m2"]);
      assert.equal((await session.search("deploy")).length, 1);
      await session.replaceContextBlock("memory", "likes tea");
      assert.equal(await new PostgresContextProvider(connection, "memory_chat", options).get(), "likes tea");
      const notes = new PostgresSearchProvider(connection, "notes", options);
      await notes.set("k1", "postgres adapter");
      assert.equal(await notes.search("adapter"), "[k1]\npostgres adapter");
      // The reference's strings: no match is a message, a blank query is null.
      assert.equal(await notes.search("nothing-like-this"), "No results found.");
      assert.equal(await notes.search("   "), null);
    });

    test("SessionManager runs over a PostgresStore on the connection", async () => {
      await truncateAll(pool, t);
      const manager = new SessionManager(new PostgresStore(connection, options));
      const info = await manager.create("first");
      await manager.append(info.id, msg("a", "hello manager"));
      const fork = await manager.fork(info.id, "a", "forked");
      assert.equal(fork.parent_session_id, info.id);
      assert.equal((await manager.search("manager")).length, 2);
      assert.deepEqual((await manager.list()).map((s) => s.name).sort(), ["first", "forked"]);
    });
  });
}
