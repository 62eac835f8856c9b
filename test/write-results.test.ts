// A write's result is the public object and nothing else: the cursor of the change-log row a write committed with
// itself, and the `seq` of the row it wrote, travel beside it in the write's record (store/written.ts), never on it
// as a Symbol-keyed property or a field. Checked on stores with a change log, where every write logs itself.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { ChangeEvent } from "../src/contract/feed.js";
import type { AppendResult } from "../src/contract/provider.js";
import type { TransferItem } from "../src/contract/transfer.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { dropSchema, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";

// Every await before the first test is registered: an await after one lets the earlier tests finish first, and a
// root-level `after` added then runs at once (it ended the pool under the server's tests).
const unavailable = await postgresUnavailable();

type Store = MemoryStore | SqliteStore | PostgresStore;

const text = (id: string, words = id) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text: words }],
});

/** Asserts `result` holds exactly the public `keys`: no symbol, no `seq`, nothing else. */
function plain(result: object, keys: string[], what: string): void {
  assert.deepEqual(Object.getOwnPropertySymbols(result), [], `${what}: no Symbol-keyed property`);
  assert.deepEqual(Object.keys(result).sort(), [...keys].sort(), `${what}: only the public fields`);
}

async function* oneMessage(sessionId: string): AsyncGenerator<TransferItem> {
  yield { kind: "session", session: { id: sessionId, info: null, leafId: "x1" } };
  const createdAt = new Date().toISOString();
  const content = JSON.stringify(text("x1"));
  yield { kind: "message", message: { id: "x1", parentId: null, role: "user", createdAt, content } };
}

function resultsOf(name: string, open: () => Promise<Store>) {
  describe(`${name}: write results`, { concurrency: false }, () => {
    test("carry only their public fields, and the feed still publishes each write once", async (t) => {
      const store = await open();
      t.after(() => store.close());
      const events: ChangeEvent[] = [];
      await new Promise<void>((resolve) => store.subscribe((e) => void events.push(e), { onReady: resolve }));
      const session = store.session("s");
      const fields = ["inserted", "message"];
      plain(await session.appendMessage(text("a")), fields, "append");
      plain(await session.appendMessage(text("a", "other")), fields, "duplicate append");
      plain(await session.upsertMessage(text("b")), [...fields, "updated"], "inserting upsert");
      plain(await session.upsertMessage(text("b", "changed")), [...fields, "updated"], "replacing upsert");
      plain(await session.updateMessage(text("a", "new")), ["updated", "message"], "update");
      plain(await session.importMessage(text("c")), fields, "import");
      const compaction = await session.addCompaction("summary", "a", "b");
      assert.deepEqual(Object.getOwnPropertySymbols(compaction), [], "compaction: no Symbol-keyed property");
      assert.equal((await session.getMessage("a"))?.parts[0]?.type, "text");

      const steps: AppendResult[] = [];
      const step = {
        sessionId: "agent",
        parentId: undefined,
        guard: false,
        check: (_: number, r: AppendResult) => void steps.push(r),
      };
      await store.registry.create({ id: "agent", name: "Agent" });
      await store.writeStep({ ...step, messages: [text("p1")] });
      await store.writeStep({ ...step, messages: [text("p2"), text("p3")] });
      assert.equal(steps.length, 3);
      for (const result of steps) plain(result, fields, "step append");
      assert.deepEqual(
        steps.map((r) => r.message?.id),
        ["p1", "p2", "p3"],
      );

      const imported = await store.transfer.importSession(oneMessage("t"));
      assert.deepEqual(
        Object.getOwnPropertySymbols(imported),
        [],
        "transfer import: no Symbol-keyed property",
      );
      assert.equal(imported.messages.inserted, 1);

      await session.deleteMessages(["c"]);
      await session.clearMessages();
      await session.appendMessage(text("z"));
      for (let i = 0; i < 500 && !events.some((e) => e.type === "append" && e.message.id === "z"); i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.deepEqual(
        events.map((e) => `${e.type} ${e.sessionId}`),
        [
          "append s",
          "append s",
          "append s",
          "update s",
          "update s",
          "import s",
          "compaction s",
          "append agent",
          "append agent",
          "append agent",
          "reset t",
          "delete s",
          "clear s",
          "append s",
        ],
      );
      const cursors = events.map((e) => e.cursor);
      if (cursors.every((c) => c === null)) return; // memory: no change log
      // Each write's own log row is its event's cursor: one row per write, in commit order, none recorded twice.
      assert.ok(
        cursors.every((c, i) => typeof c === "number" && (i === 0 || c > (cursors[i - 1] as number))),
      );
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "write-results-"));
after(() => rmSync(dir, { recursive: true, force: true }));
resultsOf("memory", async () => new MemoryStore());
resultsOf("sqlite", async () => new SqliteStore(join(dir, "results.db"), { changeLog: true }));

if (unavailable) {
  test("postgres: write results", { skip: unavailable }, () => undefined);
} else {
  const pool = testPool(4);
  const schema = "write_results_test";
  after(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });
  resultsOf("postgres", async () => {
    await dropSchema(pool, schema);
    return PostgresStore.open(pool, { schema, changeLog: true });
  });
}
