// store.transfer against concurrent writers on a real server (PGlite has one connection, so nothing races there):
// exports of sessions written by racing appenders, an append queued behind an import batch, and imports racing
// appenders on the same session.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type pg from "pg";
import type { TransferItem } from "../src/contract/transfer.js";
import { PostgresStore } from "../src/postgres/index.js";
import { ids, msg, withStore } from "../src/testing/contract/harness.js";
import { collect, importAll } from "./cli/transfer-contract.js";
import { citusPool, citusUnavailable } from "./fixtures/citus-db.js";
import {
  backendPid,
  checkTree,
  dropSchema,
  postgresUnavailable,
  testClient,
  testPool,
  waitUntilBlockedBy,
} from "./fixtures/postgres-db.js";
import {
  assertParentsFirst,
  iterate,
  messageIds,
  type SchemaTarget,
  schemaTarget,
} from "./fixtures/postgres-transfer.js";

// Every await happens before any test is registered (see postgres-transfer.test.ts).
const unavailable = await postgresUnavailable();
const pool = unavailable ? undefined : testPool(16);
const target = pool && (await schemaTarget("postgres", pool, "agent_session_test_transfer_race"));
const noCitus = await citusUnavailable();
const clusterPool = noCitus ? undefined : citusPool(16);
const clusterTarget =
  clusterPool && (await schemaTarget("citus", clusterPool, "agent_session_citus_transfer_race", 2, true));

const at = () => new Date().toISOString();
const header = (leafId: string | null): TransferItem => ({
  kind: "session",
  session: { id: "s", info: null, leafId },
});
const item = (id: string, parentId: string | null): TransferItem => ({
  kind: "message",
  message: { id, parentId, role: "user", createdAt: at(), content: JSON.stringify(msg(id)) },
});

if (!pool || !target) {
  console.log(`Skipping the Postgres transfer concurrency tests: ${unavailable}`);
  test("postgres transfer concurrency", { skip: unavailable ?? true }, () => undefined);
} else {
  after(async () => {
    for (const schema of target.schemas) await dropSchema(pool, schema);
    await pool.end();
  });
  cases("postgres", pool, target, false);
}

// The cluster, but not the append queued behind a held head lock: its lock is taken on the session's worker, where
// the coordinator's pg_blocking_pids cannot see the wait, and the routed append locks before it reads, so there is
// no stale snapshot to retry (as in postgres-concurrency.test.ts).
if (noCitus) console.log(`Skipping the Citus transfer concurrency tests: ${noCitus}`);
else if (clusterPool && clusterTarget) {
  after(async () => {
    for (const schema of clusterTarget.schemas) await dropSchema(clusterPool, schema);
    await clusterPool.end();
  });
  cases(
    "citus",
    clusterPool,
    clusterTarget,
    "the head lock is held on the session's worker, out of sight of the coordinator's pg_blocking_pids",
  );
}

/** The cases on `target`, whose stores are on `pool`; `skipLockWait` leaves out the case that reads lock waits. */
function cases(name: string, pool: pg.Pool, target: SchemaTarget, skipLockWait: string | false): void {
  describe(`${name} transfer under concurrency`, () => {
    test("a session written by racing appenders exports parents first and round-trips exactly", async (t) => {
      await withStore(target, async (store) => {
        assert.ok(store instanceof PostgresStore);
        const s = store.session("s");
        await Promise.all(
          Array.from({ length: 8 }, async (_, w) => {
            for (let i = 0; i < 40; i++)
              await s.appendMessage(msg(`w${w}-${i}`), i === 20 ? null : undefined);
          }),
        );
        const sameShard = store.tables.distributed ? " AND p.session_id = m.session_id" : "";
        const { rows } = await pool.query(
          `SELECT count(*)::int AS n FROM ${store.tables.messages} m
         JOIN ${store.tables.messages} p ON p.seq = m.parent_seq${sameShard} WHERE p.seq > m.seq`,
        );
        // Usually hundreds; the deterministic case is in postgres-transfer.test.ts.
        t.diagnostic(`${(rows[0] as { n: number }).n} children hold a smaller seq than their parent`);
        const data = await collect(store);
        assert.equal(messageIds(data.sessions[0]!).length, 320);
        assertParentsFirst(data.sessions[0]!);
        await withStore(target, async (copy) => {
          assert.ok(copy instanceof PostgresStore);
          await importAll(copy, data);
          assert.deepEqual(await collect(copy), data);
          await checkTree(pool, copy.tables, "s");
          assert.deepEqual(await copy.session("s").getHistory(), await s.getHistory());
        });
      });
    });

    test("an append queued behind an import batch finds the parent that batch wrote", {
      skip: skipLockWait,
    }, async () => {
      // The append reads its snapshot before it waits for the head lock, so it cannot see the batch's rows; the
      // batch's version bump is what tells it to retry instead of answering PARENT_NOT_FOUND.
      await withStore(target, async (store) => {
        assert.ok(store instanceof PostgresStore);
        const s = store.session("s");
        await s.appendMessage(msg("m0"));
        const holder = testClient();
        await holder.connect();
        try {
          const pid = await backendPid(holder);
          await holder.query("BEGIN");
          await holder.query(`SELECT 1 FROM ${store.tables.heads} WHERE session_id = 's' FOR UPDATE`);
          // No leaf in the header: the import then picks the newest childless row, so the head's leaf stays
          // childless whether the append or the import's leaf update commits first.
          const imported = store.transfer.importSession(iterate([header(null), item("m1", "m0")]));
          await waitUntilBlockedBy(pool, pid);
          const appended = s.appendMessage(msg("x"), "m1");
          await waitUntilBlockedBy(pool, pid, 60_000, 2);
          await holder.query("COMMIT");
          assert.deepEqual((await imported).messages, { inserted: 1, skipped: 0 });
          assert.equal((await appended).inserted, true);
        } finally {
          await holder.end();
        }
        assert.deepEqual(ids(await s.getHistory("x")), ["m0", "m1", "x"]);
        await checkTree(pool, store.tables, "s");
      });
    });

    test("an import racing appenders on the same session keeps every row once and the tree consistent", async () => {
      await withStore(target, async (store) => {
        assert.ok(store instanceof PostgresStore);
        const s = store.session("s");
        await s.appendMessage(msg("root"));
        // Three batches: a chain with a side branch every tenth message.
        const items = [header("i1199")];
        for (let i = 0; i < 1200; i++) {
          const parent = i === 0 ? "root" : i % 10 === 5 ? `i${i - 3}` : `i${i - 1}`;
          items.push(item(`i${i}`, parent));
        }
        const appended: string[] = [];
        const appenders = Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; i < 25; i++) {
            const id = `a${w}-${i}`;
            // Half of them under a message the import may or may not have written yet.
            const parent = i % 2 === 0 ? undefined : `i${i * 40}`;
            try {
              await s.appendMessage(msg(id), parent);
              appended.push(id);
            } catch (error) {
              assert.equal((error as { code?: string }).code, "PARENT_NOT_FOUND");
            }
          }
        });
        const [result] = await Promise.all([store.transfer.importSession(iterate(items)), ...appenders]);
        assert.deepEqual(result.messages, { inserted: 1200, skipped: 0 });
        const again = await store.transfer.importSession(iterate(items));
        assert.deepEqual(again.messages, { inserted: 0, skipped: 1200 });
        const rows = await checkTree(pool, store.tables, "s");
        assert.equal(rows.size, 1 + 1200 + appended.length);
        const data = await collect(store);
        assertParentsFirst(data.sessions[0]!);
        assert.deepEqual(ids(await s.getHistory("i1199")).slice(0, 3), ["root", "i0", "i1"]);
      });
    });
  });
}
