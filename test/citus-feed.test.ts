// The change feed on a Citus cluster (docs/POSTGRES.md, "Past one server"): the log is a plain table on the
// coordinator, written in each write's transaction there, and LISTEN/NOTIFY runs on the coordinator's connections.
// A subscriber sees another process's writes, and another pool's writes to sessions on every shard.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { ChangeEvent } from "../src/contract/feed.js";
import { PostgresStore } from "../src/postgres/index.js";
import { imageMessage, png } from "../src/testing/contract/media-harness.js";
import { CITUS_URL, citusPool, citusUnavailable } from "./fixtures/citus-db.js";
import { dropSchema } from "./fixtures/postgres-db.js";
import { brief, crossProcess, subscribed, until } from "./helpers/feed-cross-process.js";

const SCHEMA = `agent_session_citus_feed_${process.pid}`;
const unavailable = await citusUnavailable();

if (unavailable) {
  console.log(`Skipping the Citus feed tests: ${unavailable}`);
  test("citus feed", { skip: unavailable }, () => undefined);
} else {
  const pool = citusPool(6);
  const options = { schema: SCHEMA, distributed: true, changeLog: true } as const;
  await dropSchema(pool, SCHEMA);
  // Distributed once, here: the writer processes and the stores below find the tables distributed.
  await (await PostgresStore.open(pool, options)).close();
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  });

  crossProcess(
    "citus",
    async () => PostgresStore.open(pool, options),
    (prefix) => ["citus", CITUS_URL, SCHEMA, "x", prefix, "3"],
  );

  /** A store on the shared pool (`reader`) and one on a pool of its own (`writer`), closed after `run`. */
  async function acrossPools(run: (reader: PostgresStore, writer: PostgresStore) => Promise<void>) {
    const other = citusPool(4);
    const reader = await PostgresStore.open(pool, options);
    const writer = await PostgresStore.open(other, options);
    try {
      await run(reader, writer);
    } finally {
      await Promise.all([reader.close(), writer.close()]);
      await other.end();
    }
  }

  describe("citus: the change feed across pools", () => {
    test("a store-wide subscriber sees another pool's writes to sessions on every shard, in cursor order", () =>
      acrossPools(async (reader, writer) => {
        const events: ChangeEvent[] = [];
        const stop = await subscribed(reader, (e) => void events.push(e));
        // Twelve sessions over the four shards of each table (citusPool's shard count).
        const sessions = Array.from({ length: 12 }, (_, i) => `pool-${i}`);
        for (const id of sessions) {
          const chat = writer.session(id);
          await chat.appendMessage({ id: `${id}-a`, role: "user", parts: [{ type: "text", text: "hi" }] });
          await chat.appendMessage({ id: `${id}-b`, role: "assistant", parts: [] });
        }
        await writer.session("pool-0").clearMessages();
        await until(events, "clear");
        const appends = events.filter((e) => e.type === "append").map(brief);
        assert.deepEqual(
          appends,
          sessions.flatMap((id) => [`append ${id}-a <null`, `append ${id}-b <${id}-a`]),
        );
        assert.ok(events.every((e) => e.origin === "remote"));
        const cursors = events.map((e) => e.cursor as number);
        assert.deepEqual(
          cursors,
          [...cursors].sort((x, y) => x - y),
          "cursor order is commit order",
        );
        stop();
      }));

    test("appends with payloads (two-phase commits, on either worker) are delivered, not skipped", () =>
      acrossPools(async (reader, writer) => {
        const events: ChangeEvent[] = [];
        const stop = await subscribed(reader, (e) => void events.push(e), { sessionId: "media" });
        // Every append commits by two-phase commit; payloads sharded by hash land on either worker.
        const count = 12;
        for (let i = 0; i < count; i++)
          await writer.session("media").appendMessage(imageMessage(`p${i}`, png(2_000, 100 + i)));
        await writer.session("media").clearMessages();
        await until(events, "clear");
        assert.deepEqual(
          events.filter((e) => e.type === "append").map((e) => (e.type === "append" ? e.message.id : "")),
          Array.from({ length: count }, (_, i) => `p${i}`),
        );
        stop();
      }));
  });
}
