// Concurrent writers on one Postgres session: several pool connections in one process, and several processes, on
// the server and on a Citus cluster (when there is one; test/fixtures/citus-db.ts). "Latest leaf" under concurrency
// is the append that committed last, so appends without a parent form one chain.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import type { AppendResult, SessionProvider } from "../src/contract/provider.js";
import { PostgresStore } from "../src/postgres/index.js";
import { type Tables, tableNames } from "../src/sql/engines/postgres/tables.js";
import { msg } from "../src/testing/contract/harness.js";
import { CITUS_URL, citusPool, citusUnavailable, emptyAll } from "./fixtures/citus-db.js";
import {
  backendPid,
  checkTree,
  dropSchema,
  PG_URL,
  postgresUnavailable,
  testClient,
  testPool,
  truncateAll,
  waitUntilBlockedBy,
} from "./fixtures/postgres-db.js";
import { runFixture } from "./helpers/child.js";

// Per process, as in postgres.test.ts.
const SCHEMA = `agent_session_test_concurrency_${process.pid}`;
const unavailable = await postgresUnavailable();

/** Runs `workers` loops of `count` calls each, all at once. */
async function parallel(workers: number, count: number, fn: (worker: number, i: number) => Promise<unknown>) {
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < count; i++) await fn(w, i);
    }),
  );
}

/** The ids along the active path, root first. */
async function chain(session: SessionProvider): Promise<string[]> {
  return (await session.getHistory()).map((m) => m.id);
}

async function runChild(args: string[]): Promise<void> {
  const output = await runFixture(
    fileURLToPath(new URL("./fixtures/postgres-appender.ts", import.meta.url)),
    args,
  );
  if (output) process.stdout.write(output);
}

if (unavailable) {
  console.log(`Skipping the Postgres concurrency tests: ${unavailable}`);
  test("postgres concurrency", { skip: unavailable }, () => undefined);
} else {
  const pool = testPool(12);
  const options = { schema: SCHEMA };
  const t = tableNames(options);
  await dropSchema(pool, SCHEMA);
  const store = await PostgresStore.open(pool, options);
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  });
  const reset = () => truncateAll(pool, t);
  sharedCases({ name: "postgres", pool, store, t, url: PG_URL, reset, perProcess: 500 });

  // Not on the cluster: there the append's head lock is taken on a worker, where this coordinator's lock-wait view
  // does not see it, and the routed append locks before it reads, so its snapshot never predates the lock.
  describe("postgres: appends whose snapshot predates the lock they waited for", () => {
    // `writer` runs its append inside an open transaction, so it holds the session's head lock; `waiting` starts
    // (taking its snapshot) and blocks on that lock; the writer then commits what `waiting` cannot see.
    async function whileLocked(first: string, second: () => Promise<unknown>): Promise<unknown> {
      const client = testClient();
      await client.connect();
      try {
        const pid = await backendPid(client);
        await client.query("BEGIN");
        await new PostgresStore(client, options).session("race").appendMessage(msg(first));
        const pending = second();
        // Only once `second` is blocked on this transaction's lock is its snapshot known to predate the commit.
        await waitUntilBlockedBy(pool, pid);
        await client.query("COMMIT");
        return await pending;
      } finally {
        await client.end();
      }
    }

    test("the same id committed meanwhile: reported as not inserted (unique violation retried)", async () => {
      await truncateAll(pool, t);
      const s = store.session("race");
      await s.appendMessage(msg("r0"));
      const raced = (await whileLocked("x", () => s.appendMessage(msg("x", "second copy")))) as AppendResult;
      assert.equal(raced.inserted, false);
      assert.equal(raced.message?.parts[0]?.text, "text of x");
      assert.equal((await s.getMessage("x"))?.parts[0]?.text, "text of x");
      await checkTree(pool, t, "race");
    });

    test("after the tip: goes after the message committed meanwhile, without reading it", async () => {
      await truncateAll(pool, t);
      const s = store.session("race");
      await s.appendMessage(msg("r0"));
      await whileLocked("y", () => s.appendMessage(msg("z")));
      assert.deepEqual(
        (await s.getHistory()).map((m) => m.id),
        ["r0", "y", "z"],
      );
      await checkTree(pool, t, "race");
    });

    test("an explicit parent other than the tip: retried on a fresh snapshot", async () => {
      await truncateAll(pool, t);
      const s = store.session("race");
      await s.appendMessage(msg("r0"));
      await s.appendMessage(msg("r1"));
      await whileLocked("y", () => s.appendMessage(msg("b"), "r0"));
      assert.deepEqual(
        (await s.getHistory()).map((m) => m.id),
        ["r0", "b"],
      );
      assert.deepEqual(
        (await s.getBranches("r0")).map((m) => m.id),
        ["r1", "b"],
      );
      await checkTree(pool, t, "race");
    });
  });
}

const noCitus = await citusUnavailable();
if (noCitus) {
  console.log(`Skipping the Citus concurrency tests: ${noCitus}`);
  test("citus concurrency", { skip: noCitus }, () => undefined);
} else {
  const pool = citusPool(12);
  const options = { schema: `agent_session_test_concurrency_citus_${process.pid}`, distributed: true };
  const t = tableNames(options);
  await dropSchema(pool, options.schema);
  const store = await PostgresStore.open(pool, options);
  after(async () => {
    await dropSchema(pool, options.schema);
    await pool.end();
  });
  const reset = () => emptyAll(pool, t);
  sharedCases({ name: "citus", pool, store, t, url: CITUS_URL, reset, perProcess: 100 });
}

/** Where the shared cases run: a pool, a store on it, its tables and URL, and how to empty them. */
interface Target {
  name: string;
  pool: pg.Pool;
  store: PostgresStore;
  t: Tables;
  url: string;
  reset: () => Promise<void>;
  /** Appends each of the 4 processes makes (fewer on a cluster, whose appends are slower). */
  perProcess: number;
}

/** The cases that run on the server and on a Citus cluster alike. */
function sharedCases({ name, pool, store, t, url, reset, perProcess }: Target): void {
  describe(`${name}: concurrent appends on one session`, { concurrency: false }, () => {
    test("8 connections x 60 appends after the tip: nothing lost or doubled, one chain", async () => {
      await reset();
      const s = store.session("tip");
      await parallel(8, 60, (w, i) => s.appendMessage(msg(`w${w}-${i}`)));
      const ids = await chain(s);
      assert.equal(ids.length, 480);
      assert.equal(new Set(ids).size, 480);
      // Each worker appended in order, so its messages appear in order along the chain.
      for (let w = 0; w < 8; w++) {
        const mine = ids.filter((id) => id.startsWith(`w${w}-`)).map((id) => Number(id.split("-")[1]));
        assert.deepEqual(
          mine,
          [...mine].sort((a, b) => a - b),
        );
      }
      await checkTree(pool, t, "tip");
    });

    test("a brand-new session appended to from 10 connections at once", async () => {
      await reset();
      const s = store.session("fresh");
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => s.appendMessage(msg(`f${i}`))));
      assert.ok(results.every((r) => r.inserted));
      assert.equal((await chain(s)).length, 10);
      await checkTree(pool, t, "fresh");
    });

    test("the same id from 10 connections is inserted exactly once", async () => {
      await reset();
      const s = store.session("dup");
      await s.appendMessage(msg("root"));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => s.appendMessage(msg("same", `v${i}`))),
      );
      assert.equal(results.filter((r) => r.inserted).length, 1);
      assert.deepEqual(await chain(s), ["root", "same"]);
      await checkTree(pool, t, "dup");
    });

    test("explicit-parent branches, tip appends, updates and deletes interleaved keep the tree consistent", async () => {
      await reset();
      const s = store.session("mix");
      for (let i = 0; i < 20; i++) await s.appendMessage(msg(`base${i}`));
      // A branch onto, or an update of, a message another worker just deleted fails as it should; nothing else may.
      const expected = (error: unknown) => {
        if (!["PARENT_NOT_FOUND", "NOT_FOUND"].includes((error as { code?: string }).code ?? "")) throw error;
      };
      await parallel(6, 25, async (w, i) => {
        const op = (w + i) % 5;
        if (op === 0) await s.appendMessage(msg(`br${w}-${i}`), `base${(w * 7 + i) % 20}`).catch(expected);
        else if (op === 1) {
          await s
            .updateMessage(msg(`base${(w + i) % 20}`, "longer ".repeat(1 + ((w + i) % 7))))
            .catch(expected);
        } else if (op === 2 && i % 3 === 0) await s.deleteMessages([`base${(w * 3 + i) % 20}`]);
        else await s.appendMessage(msg(`tip${w}-${i}`));
      });
      const rows = await checkTree(pool, t, "mix");
      const present = new Set([...rows.values()].map((r) => r.id));
      for (let w = 0; w < 6; w++) {
        for (let i = 0; i < 25; i++) {
          const op = (w + i) % 5;
          if (op === 3 || op === 4 || (op === 2 && i % 3 !== 0))
            assert.ok(present.has(`tip${w}-${i}`), `tip${w}-${i}`);
        }
      }
    });

    test("optimistic appends: exactly one of several writers with the same expectedLeafId wins", async () => {
      await reset();
      const s = store.session("occ");
      await s.appendMessage(msg("start"));
      const settled = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          s.appendMessage(msg(`o${i}`), undefined, { expectedLeafId: "start" }),
        ),
      );
      assert.equal(settled.filter((r) => r.status === "fulfilled").length, 1);
      for (const r of settled)
        if (r.status === "rejected") assert.equal((r.reason as { code: string }).code, "CONFLICT");
      assert.equal((await chain(s)).length, 2);
    });
  });

  describe(`${name}: several processes on one session`, () => {
    test(`4 processes x ${perProcess} appends: all present, parent links form one chain`, async () => {
      await reset();
      await Promise.all(
        [0, 1, 2, 3].map((p) =>
          runChild([url, t.schema!, "multi", `p${p}`, String(perProcess), String(t.distributed)]),
        ),
      );
      const s = store.session("multi");
      const ids = await chain(s);
      assert.equal(ids.length, 4 * perProcess);
      assert.equal(new Set(ids).size, 4 * perProcess);
      assert.equal(await s.getPathLength(), 4 * perProcess);
      for (let p = 0; p < 4; p++) {
        const mine = ids.filter((id) => id.startsWith(`p${p}-`)).map((id) => Number(id.split("-")[1]));
        assert.deepEqual(
          mine,
          Array.from({ length: perProcess }, (_, i) => i),
        );
      }
      const rows = await checkTree(pool, t, "multi");
      assert.equal([...rows.values()].filter((r) => r.parent_seq === null).length, 1);
    });
  });
}
