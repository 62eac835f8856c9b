import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { SessionStore } from "../../src/contract/store.js";
import { hasTransfer, MemoryStore, Session, SqliteStore } from "../../src/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { msg, rejectsWithCode } from "../../src/testing/contract/harness.js";
import { dropSchema, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";

// The probes, through the public API a tenant-facing application uses (Session, SessionManager), on the
// backends where they were found. The store-level rules are in the contract suite (src/testing/contract/ids.spec.ts).
const SCHEMA = `agent_session_test_sec_ids_${process.pid}`;
const unavailable = await postgresUnavailable();
const pool = unavailable ? undefined : testPool(2);
if (pool) await dropSchema(pool, SCHEMA);
after(async () => {
  if (pool) {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  }
});

const backends: { name: string; open: () => SessionStore }[] = [
  { name: "memory", open: () => new MemoryStore() },
  { name: "sqlite", open: () => new SqliteStore(":memory:") },
];
if (pool) backends.push({ name: "postgres", open: () => new PostgresStore(pool, { schema: SCHEMA }) });

for (const backend of backends) {
  describe(`${backend.name}: tenant ids cannot collide`, () => {
    test("sessions tenant\\uD800, tenant\\uDC00 and tenant\\uFFFD never read each other's history", async () => {
      const store = backend.open();
      try {
        await Session.create(store)
          .forSession("tenant\uFFFD")
          .appendMessage(msg("secret", "tenant FFFD only"));
        for (const id of ["tenant\uD800", "tenant\uDC00"]) {
          assert.throws(() => Session.create(store).forSession(id), { code: "INVALID_ARGUMENT" });
          assert.throws(() => store.session(id), { code: "INVALID_ARGUMENT" });
        }
        assert.deepEqual(await store.searchMessages("tenant", { sessionId: "tenant\uD800" }), []);
        if (hasTransfer(store)) {
          const exported = [];
          for await (const item of store.transfer.exportSession("tenant\uD800")) exported.push(item);
          assert.deepEqual(exported, []);
          assert.equal(await store.transfer.footprint("tenant\uD800"), null);
        }
      } finally {
        await store.close();
      }
    });

    test("message a\\uDBFF after a\\uD800 is refused, not reported as already stored", async () => {
      const store = backend.open();
      try {
        const session = Session.create(store).forSession(`probe-${Date.now()}`);
        await rejectsWithCode(session.appendMessage(msg("a\uD800")), "INVALID_MESSAGE");
        await rejectsWithCode(session.appendMessage(msg("a\uDBFF")), "INVALID_MESSAGE");
        assert.deepEqual((await session.appendMessage(msg("a\uD83D\uDE00"))).inserted, true);
        assert.equal((await session.getMessage("a\uD83D\uDE00"))?.id, "a\uD83D\uDE00");
        assert.equal(await session.getMessage("a\uD83D"), null);
      } finally {
        await store.close();
      }
    });

    test("block labels, skill keys and managed session ids must be well-formed", async () => {
      const store = backend.open();
      try {
        assert.throws(() => Session.create(store).withContext("mem\uD800"), { code: "INVALID_ARGUMENT" });
        const manager = SessionManager.create(store);
        await rejectsWithCode(manager.create("n", { id: "s\uDC00" }), "INVALID_ARGUMENT");
        // The manager validates its arguments as it does for "" (the store itself answers such reads with null).
        await rejectsWithCode(manager.get("s\uDC00"), "INVALID_ARGUMENT");
      } finally {
        await store.close();
      }
    });
  });
}
