// Which engine opens a SQLite path: node:sqlite where the runtime has it, better-sqlite3 (an optional peer
// dependency) otherwise or when asked, and a MISSING_DEPENDENCY error naming the package when neither is there.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import Module from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { SessionError } from "../src/errors.js";
import { Session } from "../src/session/session.js";
import { loadBetterSqlite3, loadNodeSqlite } from "../src/sql/engines/sqlite/better-sqlite3.js";
import type { SqlDriver } from "../src/sql/engines/sqlite/driver.js";
import { openSqlite } from "../src/sql/engines/sqlite/open.js";
import { withoutRebindReprepare } from "../src/sql/engines/sqlite/rebind.js";
import { SqlTagDriver } from "../src/sql/engines/sqlite/sql-tag-driver.js";
import { flushSearchIndex } from "../src/sql/search/sqlite-indexing.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { assertSessionError } from "./helpers/session-error.js";
import { sqlTagAgent } from "./helpers/sql-tag.js";

const hasNodeSqlite = loadNodeSqlite() !== undefined;

/** Runs `fn` while better-sqlite3 (and this repository's alias for it) cannot be resolved. */
function withoutBetterSqlite3<T>(fn: () => T): T {
  const internals = Module as unknown as {
    _load: (request: string, ...rest: unknown[]) => unknown;
  };
  const load = internals._load;
  internals._load = function (request: string, ...rest: unknown[]) {
    if (request.startsWith("better-sqlite3")) {
      throw Object.assign(new Error(`Cannot find module '${request}'`), { code: "MODULE_NOT_FOUND" });
    }
    return load.call(this, request, ...rest);
  };
  try {
    return fn();
  } finally {
    internals._load = load;
  }
}

test("the default engine is node:sqlite where the runtime has it, else better-sqlite3", () => {
  const driver = openSqlite(":memory:");
  assert.equal(driver.name, hasNodeSqlite ? "node:sqlite" : "better-sqlite3");
  driver.close();
  const asked = openSqlite(":memory:", { driver: "better-sqlite3" });
  assert.equal(asked.name, "better-sqlite3");
  asked.close();
});

test("without better-sqlite3 the error says what to install", () => {
  withoutBetterSqlite3(() => {
    assert.throws(() => openSqlite(":memory:", { driver: "better-sqlite3" }), {
      code: "MISSING_DEPENDENCY",
      dependency: "better-sqlite3",
    });
    if (hasNodeSqlite) {
      const driver = openSqlite(":memory:");
      assert.equal(driver.name, "node:sqlite");
      driver.close();
    } else {
      assert.throws(() => openSqlite(":memory:"), {
        code: "MISSING_DEPENDENCY",
        dependency: "better-sqlite3",
      });
    }
  });
});

test("a Postgres URL given as a SQLite path is refused, pointing to PostgresStore, with its password hidden", () => {
  const url = "postgres://app:s3cret@127.0.0.1:5432/chat";
  const refused = { code: "INVALID_ARGUMENT", path: "", rule: "format" } as const;
  assertSessionError(() => Session.create(url), refused);
  assertSessionError(() => new SqliteStore("postgresql://localhost/chat"), refused);
  assert.throws(
    () => Session.create(url),
    (error: Error) => !error.message.includes("s3cret"),
  );
  assert.throws(() => Session.create(url), /postgres:\/\/app:\*\*\*@127\.0\.0\.1:5432\/chat/);
});

test("node:sqlite on a runtime without it is UNSUPPORTED", {
  skip: hasNodeSqlite && "node:sqlite exists here",
}, () => {
  assert.throws(() => openSqlite(":memory:", { driver: "node:sqlite" }), { code: "UNSUPPORTED" });
});

test("loading node:sqlite prints no ExperimentalWarning; other warnings still do", {
  skip: !hasNodeSqlite && `node:sqlite needs Node.js >= 22.13 (running ${process.version})`,
}, () => {
  const module = fileURLToPath(new URL("../src/sql/engines/sqlite/better-sqlite3.ts", import.meta.url));
  const script = `const { loadNodeSqlite } = await import(${JSON.stringify(module)});
    loadNodeSqlite(); process.emitWarning("still here", "ExperimentalWarning");`;
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  assert.equal(child.status, 0, child.stderr);
  assert.doesNotMatch(child.stderr, /SQLite is an experimental feature/);
  assert.match(child.stderr, /ExperimentalWarning: still here/);
});

test("tuples returns each row's values in select order on every driver", async (t) => {
  const drivers: [string, () => SqlDriver][] = [
    ["better-sqlite3", () => openSqlite(":memory:", { driver: "better-sqlite3" })],
    ["sql-tag", () => new SqlTagDriver(sqlTagAgent())],
  ];
  if (hasNodeSqlite) drivers.push(["node:sqlite", () => openSqlite(":memory:", { driver: "node:sqlite" })]);
  for (const [name, open] of drivers) {
    await t.test(name, () => {
      const driver = open();
      try {
        driver.run("CREATE TABLE t (b TEXT, a INTEGER)");
        driver.run("INSERT INTO t VALUES ('x', 1), ('y', 2)");
        const sql = "SELECT a, b, a * 10 AS c FROM t ORDER BY a";
        assert.deepEqual(driver.tuples<[number, string, number]>(sql), [
          [1, "x", 10],
          [2, "y", 20],
        ]);
        // The same statement keeps answering rows as objects and columns as values.
        assert.deepEqual({ ...driver.all(sql)[0] }, { a: 1, b: "x", c: 10 });
        assert.deepEqual(driver.column(sql), [1, 2]);
        assert.deepEqual(driver.tuples("SELECT a FROM t WHERE a > ?", [5]), []);
      } finally {
        driver.close();
      }
    });
  }
});

test("read runs its statements on one snapshot, joins a transaction and refuses to start one", async (t) => {
  const engines: ("better-sqlite3" | "node:sqlite")[] = ["better-sqlite3"];
  if (hasNodeSqlite) engines.push("node:sqlite");
  for (const engine of engines) {
    await t.test(engine, () => {
      const dir = mkdtempSync(join(tmpdir(), "driver-read-"));
      const reader = openSqlite(join(dir, "a.db"), { driver: engine });
      const writer = openSqlite(join(dir, "a.db"), { driver: engine });
      try {
        reader.run("CREATE TABLE t (a INTEGER)");
        const count = () => reader.column<number>("SELECT count(*) FROM t")[0];
        const seen = reader.read(() => {
          const before = count();
          writer.run("INSERT INTO t VALUES (1)");
          return [before, count()];
        });
        assert.deepEqual(seen, [0, 0], "a commit between two reads of one snapshot is not seen");
        assert.equal(count(), 1);
        assert.throws(
          () => reader.read(() => reader.transaction(() => reader.run("INSERT INTO t VALUES (2)"))),
          (error: unknown) => error instanceof SessionError && error.code === "UNSUPPORTED",
        );
        assert.throws(() => reader.read(() => reader.column("SELECT nope FROM t")), /nope/);
        // Both failures ended their snapshot: a write transaction starts, and reads inside it join it.
        reader.transaction(() => {
          reader.run("INSERT INTO t VALUES (3)");
          assert.equal(
            reader.read(() => reader.read(count)),
            2,
          );
        });
        assert.equal(count(), 2);
      } finally {
        reader.close();
        writer.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

test("a search on a shared handle inside its owner's transaction reads in that transaction", async () => {
  const Database = await loadBetterSqlite3();
  const db = new Database(":memory:");
  const store = new SqliteStore(db);
  try {
    await store
      .session("s")
      .appendMessage({ id: "a", role: "user", parts: [{ type: "text", text: "quokka" }] });
    // Indexed first: a write (the search indexing what is pending) cannot start inside the owner's transaction.
    flushSearchIndex(store.driver);
    db.exec("BEGIN");
    const hits = await store.searchMessages("quokka");
    db.exec("COMMIT");
    assert.deepEqual(
      hits.map((hit) => hit.id),
      ["a"],
    );
  } finally {
    await store.close();
    db.close();
  }
});

test("a handle opened for 64-bit integers still reads numbers: a store over it appends and reads", async (t) => {
  const handles: [string, () => object][] = [
    [
      "better-sqlite3 defaultSafeIntegers",
      () => {
        const Database = loadBetterSqlite3();
        return new Database(":memory:").defaultSafeIntegers(true);
      },
    ],
  ];
  const nodeSqlite = loadNodeSqlite();
  if (nodeSqlite) {
    const open = () => new nodeSqlite.DatabaseSync(":memory:", { readBigInts: true }) as object;
    handles.push(["node:sqlite readBigInts", open]);
  }
  for (const [name, open] of handles) {
    await t.test(name, async () => {
      const store = new SqliteStore(open() as never);
      const s = store.session("a");
      await s.appendMessage({ id: "u1", role: "user", parts: [{ type: "text", text: "hello" }] });
      await s.appendMessage({ id: "u2", role: "user", parts: [{ type: "text", text: "again" }] });
      assert.deepEqual(
        (await s.getHistory()).map((m) => m.id),
        ["u1", "u2"],
      );
      assert.deepEqual(
        (await s.searchMessages("hello")).map((m) => m.id),
        ["u1"],
      );
      await store.close();
    });
  }
});

test("equalities, limits and offsets with a bare parameter are prepared with `+?`, any other parameter as written", () => {
  assert.equal(
    withoutRebindReprepare("SELECT a FROM t JOIN u ON u.k = t.k WHERE t.id = ? AND t.n=? ORDER BY a"),
    "SELECT a FROM t JOIN u ON u.k = t.k WHERE t.id = +? AND t.n= +? ORDER BY a",
  );
  assert.equal(
    withoutRebindReprepare("UPDATE t SET a = ?, b = ? WHERE c = ?"),
    "UPDATE t SET a = +?, b = +? WHERE c = +?",
  );
  assert.equal(
    withoutRebindReprepare("SELECT a FROM t WHERE b MATCH ? ORDER BY a LIMIT ? OFFSET ?"),
    "SELECT a FROM t WHERE b MATCH ? ORDER BY a LIMIT +? OFFSET +?",
  );
  assert.equal(withoutRebindReprepare("select a from t limit\n  ?"), "select a from t limit +?");
  for (const unchanged of [
    "a <= ?",
    "a >= ?",
    "a != ?",
    "a == ?",
    "a IN (?)",
    "LIMIT 5",
    "LIMIT +?",
    "DELIMIT ?",
    "VALUES (?, ?)",
    "a = +?",
  ]) {
    assert.equal(withoutRebindReprepare(unchanged), unchanged);
  }
  // The same rows either way, whatever the value's type against whatever the column's affinity (a parameter has
  // no affinity, nor has `+?`); checked on the engine directly, without the driver's rewrite.
  const Database = loadBetterSqlite3();
  const db = new Database(":memory:");
  try {
    db.exec(`CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, r REAL, b BLOB, x);
      INSERT INTO t VALUES ('1', 1, 1.5, x'00ff', '2'), ('x', 2, 2.0, NULL, 2), ('2', 3, NULL, x'', NULL)`);
    const values = ["1", 1, "2", 2, 2.0, 1.5, "1.5", "x", Buffer.from([0, 255]), Buffer.alloc(0), null];
    for (const column of ["id", "n", "r", "b", "x"]) {
      for (const value of values) {
        const plain = db.prepare(`SELECT rowid FROM t WHERE ${column} = ? ORDER BY rowid`).pluck().all(value);
        const plus = db.prepare(`SELECT rowid FROM t WHERE ${column} = +? ORDER BY rowid`).pluck().all(value);
        assert.deepEqual(plus, plain, `${column} = ${String(value)}`);
      }
    }
    // A limit or offset: the same rows, or the same error, for any value.
    const outcome = (sql: string, value: unknown) => {
      try {
        return db.prepare(sql).pluck().all(value);
      } catch (error) {
        return (error as Error).message;
      }
    };
    for (const value of [0, 1, 2, 2.0, "2", -1, 1.5, "1.5", "x", null, Buffer.from([1])]) {
      for (const clause of ["LIMIT", "LIMIT 2 OFFSET"]) {
        const plain = outcome(`SELECT rowid FROM t ORDER BY rowid ${clause} ?`, value);
        const plus = outcome(`SELECT rowid FROM t ORDER BY rowid ${clause} +?`, value);
        assert.deepEqual(plus, plain, `${clause} ${String(value)}`);
      }
    }
  } finally {
    db.close();
  }
});

test("the page cache is 64 MiB unless pageCacheMiB says otherwise; a bad connection option is INVALID_ARGUMENT", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-cache-"));
  try {
    const cacheOf = async (options: { pageCacheMiB?: number }) => {
      const store = new SqliteStore(join(dir, "cache.db"), options);
      const [kib] = store.driver.column<number>("PRAGMA cache_size");
      await store.close();
      return kib;
    };
    assert.equal(await cacheOf({}), -64 * 1024);
    assert.equal(await cacheOf({ pageCacheMiB: 8 }), -8 * 1024);
    const invalid = (error: unknown) => error instanceof SessionError && error.code === "INVALID_ARGUMENT";
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 21, "16" as unknown as number]) {
      assert.throws(
        () => new SqliteStore(join(dir, "cache.db"), { pageCacheMiB: bad }),
        invalid,
        String(bad),
      );
    }
    // The other connection options are checked the same way, before the file is opened.
    assert.throws(() => new SqliteStore(join(dir, "cache.db"), { busyTimeoutMs: -1 }), invalid);
    assert.throws(
      () => new SqliteStore(join(dir, "cache.db"), { durability: "fsync" as unknown as "full" }),
      invalid,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
