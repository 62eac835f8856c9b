// getSiblings reads one range of an index on SQLite, however long the session: a root's siblings through the partial
// index agent_messages_roots (only rows without a parent), a child's through agent_messages_parent; a database made
// before the roots index gains it on open. Proven by query plans, not by time.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { openSqlite } from "../src/sql/engines/sqlite/open.js";
import { CHILDREN, ROOTS } from "../src/sql/message-reads/sqlite.js";
import { migrate, SQLITE_MIGRATIONS } from "../src/sqlite/schema.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { ids, msg } from "../src/testing/contract/harness.js";

const LATEST = Math.max(...SQLITE_MIGRATIONS.map((step) => step.version));

test("SQLite: a version-14 database gains the roots index on open; roots and children are ranges of an index", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-siblings-"));
  const file = join(dir, "v14.db");
  const driver = openSqlite(file);
  migrate(
    driver,
    SQLITE_MIGRATIONS.filter((m) => m.version < 15),
  );
  driver.close();
  const store = new SqliteStore(file);
  try {
    const s = store.session("long");
    await s.appendMessage(msg("r0", "first"));
    for (let i = 1; i < 300; i++) await s.appendMessage(msg(`m${i}`, `turn ${i}`));
    await s.appendMessage(msg("r1", "first, edited"), null);
    await store.session("other").appendMessage(msg("x", "elsewhere"));
    assert.equal(
      store.driver.get<{ version: number }>("SELECT version FROM agent_session_schema")?.version,
      LATEST,
    );
    store.driver.run("ANALYZE");
    const num = store.driver.get<{ num: number }>(
      "SELECT num FROM agent_session_heads WHERE session_id = 'long'",
    )!.num;
    for (const [sql, params, index] of [
      [ROOTS, [num, 101], /USING (COVERING )?INDEX agent_messages_roots \(session_num=\?\)/],
      [CHILDREN, [5, 101], /USING (COVERING )?INDEX agent_messages_parent \(parent_seq=\?\)/],
    ] as const) {
      const plan = store.driver
        .all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, [...params])
        .map((row) => row.detail)
        .join(" | ");
      assert.match(plan, index, plan);
      assert.doesNotMatch(plan, /TEMP B-TREE|SCAN agent_messages/, plan);
    }
    const roots = await s.getSiblings("r1");
    assert.deepEqual(roots && { siblings: ids(roots.siblings), index: roots.index }, {
      siblings: ["r0", "r1"],
      index: 1,
    });
    // Idempotent: running the steps again changes nothing.
    assert.equal(migrate(store.driver), LATEST);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
