// store.transfer on Postgres: the transfer contract (test/cli/transfer-contract.ts) on a pg Pool and on PGlite,
// and what is Postgres's own: parents before children whatever their seqs, times of any year, text Postgres
// cannot hold, and keyset pages that read along an index without sorting.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { TransferItem } from "../src/contract/transfer.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/index.js";
import type { Executor, Query } from "../src/sql/engines/postgres/client.js";
import {
  type ContractTarget,
  ids,
  msg,
  rejectsWithCode,
  withStore,
} from "../src/testing/contract/harness.js";
import { collect, importAll, runTransferContract, seedRich } from "./cli/transfer-contract.js";
import { citusPool, citusUnavailable } from "./fixtures/citus-db.js";
import {
  checkTree,
  dropSchema,
  pgliteUnlessSwitchedOff,
  postgresUnavailable,
  type Runner,
  testPool,
} from "./fixtures/postgres-db.js";
import { iterate, messageIds, moveSeqAbove, schemaTarget } from "./fixtures/postgres-transfer.js";

// Every await happens before any test is registered: the runner starts registered tests while the module is
// still evaluating, and a pool ended by a hook must not be in use by setup still running.
const pglite = await pgliteUnlessSwitchedOff();
const pgliteTarget = pglite && (await schemaTarget("postgres (PGlite)", pglite, "agent_session_xfer"));
after(() => pglite?.close());
const unavailable = await postgresUnavailable();
const pool = unavailable ? undefined : testPool();
const poolTarget = pool && (await schemaTarget("postgres (pg Pool)", pool, "agent_session_test_transfer"));
// The cluster: two distributed schemas (the contract opens a second, empty store inside a test).
const noCitus = await citusUnavailable();
const clusterPool = noCitus ? undefined : citusPool(4);
const clusterTarget =
  clusterPool && (await schemaTarget("citus", clusterPool, "agent_session_citus_transfer", 2, true));
if (noCitus) console.log(`Skipping the Citus transfer tests: ${noCitus}`);

const message = (id: string, parentId: string | null, createdAt: string, content = JSON.stringify(msg(id))) =>
  ({ kind: "message", message: { id, parentId, role: "user", createdAt, content } }) as const;

function specifics(target: ContractTarget, db: Runner) {
  describe(`transfer on ${target.name}`, () => {
    test("a parent whose seq is above its children's still comes first, and siblings keep their order", async () => {
      await withStore(target, async (store) => {
        assert.ok(store instanceof PostgresStore);
        const s = store.session("s");
        for (const id of ["r", "a", "b", "c", "d"]) await s.appendMessage(msg(id));
        await s.appendMessage(msg("e"), "b");
        await moveSeqAbove(db, store, "s", "b");
        await checkTree(db, store.tables, "s");
        const data = await collect(store);
        assert.deepEqual(messageIds(data.sessions[0]!), ["r", "a", "b", "c", "d", "e"]);
        await withStore(target, async (copy) => {
          assert.ok(copy instanceof PostgresStore);
          await importAll(copy, data);
          assert.deepEqual(await collect(copy), data);
          assert.deepEqual(ids(await copy.session("s").getBranches("b")), ["c", "e"]);
          assert.deepEqual(ids(await copy.session("s").getHistory()), ["r", "a", "b", "e"]);
          await checkTree(db, copy.tables, "s");
        });
      });
    });

    test("an import across many batches computes the tree columns an append would", async () => {
      await withStore(target, async (store) => {
        assert.ok(store instanceof PostgresStore);
        await store.session("s").appendMessage(msg("root"));
        const at = new Date().toISOString();
        const items: TransferItem[] = [
          { kind: "session", session: { id: "s", info: null, leafId: "i1234" } },
        ];
        // Parents inside the batch, in an earlier batch, and already stored before the import.
        for (let i = 0; i < 1235; i++) {
          items.push(
            message(`i${i}`, i === 0 || i % 100 === 7 ? "root" : `i${i - (i % 10 === 5 ? 3 : 1)}`, at),
          );
        }
        assert.deepEqual((await store.transfer.importSession(iterate(items))).messages, {
          inserted: 1235,
          skipped: 0,
        });
        await checkTree(db, store.tables, "s");
        const memory = new MemoryStore();
        await memory.session("s").appendMessage(msg("root"));
        await memory.transfer.importSession(iterate(items));
        for (const leaf of ["i1234", "i1005", "i707"]) {
          assert.deepEqual(
            await store.session("s").getHistory(leaf),
            await memory.session("s").getHistory(leaf),
          );
        }
      });
    });

    test("times of every year toISOString writes travel exactly; other strings are refused", async () => {
      await withStore(target, async (store) => {
        assert.ok(store instanceof PostgresStore);
        const times = [
          "+010000-01-01T00:00:00.000Z",
          "0000-01-01T00:00:00.000Z",
          "-000001-03-01T00:00:00.999Z",
        ];
        const info = {
          id: "old",
          name: "old",
          parent_session_id: null,
          model: null,
          source: null,
          input_tokens: 1,
          output_tokens: 2,
          cache_read_tokens: 3,
          cache_write_tokens: 4,
          estimated_cost: 0.1 + 0.2,
          end_reason: null,
          created_at: times[2]!,
          updated_at: times[0]!,
        };
        const items: TransferItem[] = [
          { kind: "session", session: { id: "old", info, leafId: "t2" } },
          message("t0", null, times[0]!),
          message("t1", "t0", times[1]!),
          message("t2", "t1", times[2]!),
          {
            kind: "compaction",
            compaction: {
              id: "c",
              summary: "s",
              fromMessageId: "t0",
              toMessageId: "t1",
              createdAt: times[1]!,
            },
          },
        ];
        await store.transfer.importSession(iterate(items));
        assert.deepEqual((await collect(store)).sessions, [items]);
        assert.deepEqual(await store.registry.get("old"), info);
        for (const bad of [
          "yesterday",
          "2025-01-31",
          "2025-01-31T12:00:00Z",
          "2025-01-31T12:00:00.000+00:00",
        ]) {
          await rejectsWithCode(
            store.transfer.importSession(
              iterate([
                { kind: "session", session: { id: "x", info: null, leafId: null } },
                message("x1", null, bad),
              ]),
            ),
            "INVALID_ARGUMENT",
            { path: "createdAt", rule: "format" },
          );
        }
      });
    });

    test("text Postgres cannot hold travels exactly in blocks, entries and summaries; a message that is not JSON is refused", async () => {
      await withStore(target, async (store) => {
        assert.ok(store instanceof PostgresStore);
        const odd = "nul \u0000 and a lone \ud800 surrogate";
        const rows = [
          { kind: "block", key: "memory_s", content: odd },
          { kind: "entry", label: "notes", key: "k", content: odd },
        ] as const;
        assert.deepEqual(await store.transfer.importRows(iterate(rows)), { inserted: 2, skipped: 0 });
        const at = new Date().toISOString();
        const compaction = { id: "c", summary: odd, fromMessageId: "m", toMessageId: "m", createdAt: at };
        const header = { kind: "session", session: { id: "s", info: null, leafId: "m" } } as const;
        await store.transfer.importSession(
          iterate([header, message("m", null, at), { kind: "compaction", compaction }]),
        );
        const data = await collect(store);
        assert.deepEqual(data.rows, rows);
        assert.deepEqual(data.sessions[0]!.at(-1), { kind: "compaction", compaction });
        assert.deepEqual(await store.entries.searchEntries("notes", "surrogate"), [
          { key: "k", content: odd },
        ]);
        await rejectsWithCode(
          store.transfer.importSession(iterate([header, message("raw", null, at, `{"id":"raw"\u0000`)])),
          "INVALID_MESSAGE",
          { path: "content", rule: "format" },
        );
      });
    });
  });
}

/** Records every statement a store runs, in transactions too (one executor serves the whole store). */
async function recordStatements(
  store: PostgresStore,
): Promise<{ seen: Map<string, unknown[]>; stop(): void }> {
  const executor: Executor = await store.ready();
  const { query, transaction } = executor;
  const seen = new Map<string, unknown[]>();
  const recording = (run: Query): Query =>
    ((sql: string, params: readonly unknown[] = [], prepared?: boolean) => {
      seen.set(sql, [...params]);
      return run(sql, params, prepared);
    }) as Query;
  executor.query = recording(query);
  executor.transaction = (fn) => transaction((tx) => fn(recording(tx)));
  return {
    seen,
    stop: () => {
      executor.query = query;
      executor.transaction = transaction;
    },
  };
}

if (pglite && pgliteTarget) {
  runTransferContract(pgliteTarget);
  specifics(pgliteTarget, pglite);
}

if (!pool || !poolTarget) {
  console.log(`Skipping the Postgres transfer tests on a server: ${unavailable}`);
  test("transfer contract: postgres (pg Pool)", { skip: unavailable ?? true }, () => undefined);
} else {
  after(async () => {
    for (const schema of poolTarget.schemas) await dropSchema(pool, schema);
    await pool.end();
  });
  runTransferContract(poolTarget);
  specifics(poolTarget, pool);

  // With sequential scans and sorts priced out, a Seq Scan or Sort left in a plan means no index can serve it: a
  // keyset page would then read (or sort) the whole table or session again for every page.
  test("every transfer statement reads along an index, and no listing sorts", async () => {
    await withStore(poolTarget, async (store) => {
      assert.ok(store instanceof PostgresStore);
      await seedRich(store);
      // Past one page of blocks and of unregistered sessions, so the statements of later pages run too.
      const t = store.tables;
      await pool.query(
        `INSERT INTO ${t.blocks} (key, content) SELECT 'k' || i, 'v' FROM generate_series(1, 1001) i`,
      );
      await pool.query(
        `INSERT INTO ${t.heads} (session_id, message_count, created_at, updated_at)
         SELECT 'h' || i, 1, now(), now() FROM generate_series(1, 1001) i`,
      );
      const recorder = await recordStatements(store);
      const data = await collect(store);
      for await (const id of store.transfer.sessionIds()) await store.transfer.footprint(id);
      await withStore(poolTarget, async (copy) => {
        assert.ok(copy instanceof PostgresStore);
        const copyRecorder = await recordStatements(copy);
        await importAll(copy, data);
        copyRecorder.stop();
        for (const [sql, params] of copyRecorder.seen) recorder.seen.set(sql, params);
      });
      recorder.stop();
      assert.ok(recorder.seen.size >= 20, `saw ${recorder.seen.size} statements`);
      const client = await pool.connect();
      try {
        await client.query("SET enable_seqscan = off");
        await client.query("SET enable_sort = off");
        for (const [sql, params] of recorder.seen) {
          if (!/^\s*(SELECT|INSERT|UPDATE|WITH)/i.test(sql) || /^SELECT (version|to_regclass)/.test(sql))
            continue;
          const { rows } = await client.query(`EXPLAIN ${sql}`, params);
          const plan = rows.map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]).join("\n");
          const text = `${sql.replace(/\s+/g, " ")}\n${plan}`;
          assert.doesNotMatch(plan, /Seq Scan on agent_/, text);
          if (/ORDER BY[^)]*LIMIT \$\d+$/.test(sql.replace(/\s+/g, " ").trim())) {
            assert.doesNotMatch(plan, /\bSort\b/, text);
          }
        }
      } finally {
        client.release();
      }
    });
  });
}

if (clusterPool && clusterTarget) {
  after(async () => {
    for (const schema of clusterTarget.schemas) await dropSchema(clusterPool, schema);
    await clusterPool.end();
  });
  runTransferContract(clusterTarget);
  specifics(clusterTarget, clusterPool);
}
