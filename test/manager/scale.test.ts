// 1,000 sessions × 100 messages: list() and search() read the registry and a bounded number of index entries,
// never every message. Proven by counting what the SQLite driver actually returns and by the query plans of the
// statements run — not by wall-clock time, which would flake.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";
import type { SqlDriver, SqlValue } from "../../src/sql/engines/sqlite/driver.js";
import { indexPending } from "../../src/sql/search/sqlite-indexing.js";
import { appendRow } from "../../src/sqlite/append.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { msg } from "../../src/testing/contract/harness.js";

const PER_SESSION = 100;

interface Statement {
  sql: string;
  params: readonly SqlValue[];
  rows: number;
}

/** Records every statement the store runs while `recording`, and how many rows it handed back. */
function instrument(driver: SqlDriver): { log: Statement[]; recording: boolean; explain: SqlDriver["all"] } {
  const all = driver.all.bind(driver);
  const get = driver.get.bind(driver);
  const recorder = { log: [] as Statement[], recording: false, explain: all };
  driver.all = <T>(sql: string, params: readonly SqlValue[] = []) => {
    const rows = all<T>(sql, params);
    if (recorder.recording) recorder.log.push({ sql, params, rows: rows.length });
    return rows;
  };
  driver.get = <T>(sql: string, params: readonly SqlValue[] = []) => {
    const row = get<T>(sql, params);
    if (recorder.recording) recorder.log.push({ sql, params, rows: row === undefined ? 0 : 1 });
    return row;
  };
  return recorder;
}

function text(session: number, i: number): string {
  // "common" is in every message; "needle" in exactly one message of the whole store.
  const rare = session === 7 && i === 50 ? " needle" : "";
  return `session ${session} message ${i} about the common topic${rare}`;
}

type Seeded = { store: SqliteStore; manager: SessionManager; recorder: ReturnType<typeof instrument> };

async function seed(sessions: number): Promise<Seeded> {
  const store = new SqliteStore(":memory:");
  const manager = SessionManager.create(store);
  for (let s = 0; s < sessions; s++) await manager.create(`chat ${s}`, { id: `s${s}` });
  // Bulk load through the real append path, in one transaction so seeding 100,000 messages stays quick.
  store.driver.transaction(() => {
    for (let s = 0; s < sessions; s++) {
      for (let i = 0; i < PER_SESSION; i++) {
        appendRow(store.driver, `s${s}`, msg(`m${i}`, text(s, i)), { parentId: undefined });
      }
    }
    // The last partial batch of the search index, so both stores start searching with nothing pending.
    indexPending(store.driver);
  });
  return { store, manager, recorder: instrument(store.driver) };
}

interface Measure {
  statements: number;
  rows: number;
  plans: string[];
}

async function measure({ recorder }: Seeded, body: () => Promise<unknown>): Promise<Measure> {
  recorder.recording = true;
  try {
    await body();
  } finally {
    recorder.recording = false;
  }
  const log = recorder.log.splice(0);
  const plans = new Set<string>();
  for (const { sql, params } of log) {
    const rows = recorder.explain<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params);
    plans.add(rows.map((row) => row.detail).join(" | "));
  }
  return { statements: log.length, rows: log.reduce((sum, s) => sum + s.rows, 0), plans: [...plans] };
}

const FULL_SCAN = /\bSCAN (agent_messages|agent_session_heads|agent_compactions)\b/;

describe("SessionManager at scale (SQLite)", () => {
  test("1,000 sessions × 100 messages: list() and search() do not read every message", async () => {
    const small = await seed(100);
    const large = await seed(1000);
    const total = 1000 * PER_SESSION;
    assert.equal(large.store.driver.get<{ n: number }>("SELECT COUNT(*) AS n FROM agent_messages")?.n, total);

    for (const { manager } of [small, large]) {
      await manager.append("s3", msg("fresh", "latest activity"));
    }
    const listSmall = await measure(small, () => small.manager.list());
    const listLarge = await measure(large, async () => {
      const rows = await large.manager.list();
      assert.equal(rows.length, 1000);
      assert.equal(rows[0]?.id, "s3", "newest activity first");
    });
    // One statement, one row per session, straight from the ordering index.
    assert.deepEqual([listLarge.statements, listLarge.rows], [1, 1000]);
    assert.deepEqual([listSmall.statements, listSmall.rows], [1, 100]);
    assert.match(listLarge.plans[0]!, /agent_sessions_recent/);
    assert.doesNotMatch(listLarge.plans[0]!, /TEMP B-TREE|agent_messages/);
    const page = await measure(large, () => large.manager.list({ limit: 20 }));
    assert.deepEqual([page.statements, page.rows], [1, 20]);

    for (const [query, options] of [
      ["common topic", { limit: 10 }],
      ["common", { limit: 10, branch: "active" as const }],
      ["needle", {}],
    ] as const) {
      const a = await measure(small, () => small.manager.search(query, options));
      const b = await measure(large, async () => {
        const hits = await large.manager.search(query, options);
        assert.ok(hits.length > 0, query);
      });
      // Work is bounded by the limit (and the fixed ranking window), not by the size of the store.
      assert.deepEqual([b.statements, b.rows], [a.statements, a.rows], `${query}: same work at 10× the data`);
      assert.ok(b.rows < total / 20, `${query}: ${b.rows} rows read of ${total} messages`);
      for (const plan of b.plans) assert.doesNotMatch(plan, FULL_SCAN, `${query}: ${plan}`);
    }
    // One session's search costs what that session holds, whatever else is in the store.
    const scopedSmall = await measure(small, () => small.manager.search("common", { sessionId: "s50" }));
    const scopedLarge = await measure(large, () => large.manager.search("common", { sessionId: "s50" }));
    assert.deepEqual([scopedLarge.statements, scopedLarge.rows], [scopedSmall.statements, scopedSmall.rows]);
    assert.ok(scopedLarge.rows < total / 20, `scoped search read ${scopedLarge.rows} rows`);
    for (const plan of scopedLarge.plans) assert.doesNotMatch(plan, FULL_SCAN, plan);

    await small.manager.close();
    await large.manager.close();
    await small.store.close();
    await large.store.close();
  });
});

describe("SessionManager at scale (memory)", () => {
  test("list() reads registry rows only, never session data", async () => {
    const store = new MemoryStore();
    const manager = SessionManager.create(store);
    for (let s = 0; s < 1000; s++) {
      const id = `s${s}`;
      await manager.create(`chat ${s}`, { id });
      const provider = store.session(id);
      for (let i = 0; i < PER_SESSION; i++) await provider.appendMessage(msg(`m${i}`, text(s, i)));
    }
    let reads = 0;
    const original = store.sessionData.bind(store);
    store.sessionData = (id, create) => {
      reads++;
      return original(id, create);
    };
    const rows = await manager.list();
    assert.equal(rows.length, 1000);
    assert.equal(reads, 0);
  });
});
