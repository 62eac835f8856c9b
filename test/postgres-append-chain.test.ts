// An agent step of several messages after the leaf is one statement on one server (postgres/append-chain.ts): its
// rows must be what the single appends write. The same steps go into two schemas, one as written (chains), one a
// message a step (the single append), and every stored column is compared: tree columns and skip pointers (as ids),
// bytes and tokens and their running sums, times, search vectors, content hashes, and the head. Also with a keyring
// (an encrypted owner: sealed rows, blind tokens, the key guard) and where the chain falls back (an id stored).
// A third schema takes every step through the chain of new ids (TimedMessages.appendNew, chains of one included),
// which writes nothing when any session holds one of the ids.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { SessionError } from "../src/errors.js";
import { PostgresStore } from "../src/postgres/store.js";
import {
  dropSchema,
  pgliteUnlessSwitchedOff,
  postgresUnavailable,
  testPool,
} from "./fixtures/postgres-db.js";
import { chainText } from "./helpers/chain-messages.js";
import { randomKeyring } from "./helpers/encryption.js";

const unavailable = await postgresUnavailable();
const pglite = await pgliteUnlessSwitchedOff();

/** What both a pool and PGlite answer. */
interface Db {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

const text = chainText;

// Every stored column of the session's rows, seqs as ids; `sealed` leaves out the content (its nonce differs).
async function rowsOf(pool: Db, schema: string, session: string, sealed: boolean) {
  const { rows } = await pool.query(
    `SELECT m.id, p.id AS parent, m.role, ${sealed ? "" : "m.content, "}m.created_at, m.depth, j.id AS jump, m.jump_depth,
       m.bytes, m.cum_bytes, m.tokens, m.cum_tokens, m.search::text AS search, m.content_hash
     FROM ${schema}.agent_messages m JOIN ${schema}.agent_session_heads h ON h.num = m.session_num
     LEFT JOIN ${schema}.agent_messages p ON p.seq = m.parent_seq LEFT JOIN ${schema}.agent_messages j ON j.seq = m.jump_seq
     WHERE h.session_id = $1 ORDER BY m.seq`,
    [session],
  );
  const [head] = (
    await pool.query(
      `SELECT h.leaf_id, h.leaf_depth, h.leaf_cum_bytes, h.leaf_cum_tokens, h.message_count, h.created_at,
         h.updated_at, ARRAY(SELECT m.id FROM unnest(h.leaf_spine_seq) WITH ORDINALITY s(seq, n)
           JOIN ${schema}.agent_messages m ON m.seq = s.seq ORDER BY s.n) AS spine, h.leaf_spine_depth
       FROM ${schema}.agent_session_heads h WHERE h.session_id = $1`,
      [session],
    )
  ).rows;
  return { rows, head };
}

const backends: { name: string; skip: string | false; db: () => Db & { end?(): Promise<void> } }[] = [
  { name: "Postgres", skip: unavailable ?? false, db: () => testPool(2) },
  { name: "PGlite", skip: pglite ? false : "AGENT_SESSION_PGLITE=off", db: () => pglite as unknown as Db },
];

for (const backend of backends)
  describe(`${backend.name}: a step's chain statement writes what single appends write`, {
    skip: backend.skip,
  }, () => {
    const pool = backend.skip ? (undefined as unknown as Db) : backend.db();
    const schemas: string[] = [];
    after(async () => {
      for (const schema of schemas) await dropSchema(pool as never, schema);
      await (pool as { end?(): Promise<void> }).end?.();
      if (backend.name === "PGlite") await pglite?.close();
    });

    for (const keyed of [false, true]) {
      test(keyed ? "an encrypted owner's session (sealed rows)" : "a session in clear", async () => {
        const keyring = keyed ? randomKeyring(["alice"]) : undefined;
        const open = async (name: string) => {
          const schema = `agent_chain_${name}_${keyed ? "k" : "c"}_${process.pid}`;
          schemas.push(schema);
          await dropSchema(pool as never, schema);
          const store = await PostgresStore.open(pool as never, { schema, ...(keyring ? { keyring } : {}) });
          await store.registry.create({ id: "s", name: "S", owner: "alice" });
          return { store, schema };
        };
        const chained = await open("chains");
        const single = await open("single");
        const news = await open("news");
        const step = { sessionId: "s", parentId: undefined, guard: false, source: undefined, owner: "alice" };
        // Steps of 2..9 messages from a new head (its first write a chain), then on; single appends alike.
        let at = 0;
        const sizes = [3, 2, 5, 1, 9, 2, 7, 4, 8, 6];
        for (const size of sizes) {
          const messages = Array.from({ length: size }, () => text(`m${++at}`, at));
          await chained.store.writeStep({ ...step, messages });
          assert.equal(await news.store.timedMessages.appendNew({ ...step, messages }), true);
          for (const message of messages) await single.store.writeStep({ ...step, messages: [message] });
        }
        // A cleared session (a head without a leaf) takes a chain as new roots.
        for (const { store } of [chained, single, news]) await store.session("s").clearMessages();
        const again = [text("r1", 100), text("r2", 101), text("r3", 102)];
        await chained.store.writeStep({ ...step, messages: again });
        assert.equal(await news.store.timedMessages.appendNew({ ...step, messages: again }), true);
        for (const message of again) await single.store.writeStep({ ...step, messages: [message] });
        // A chain with an id stored already: the general step (the duplicate not inserted, the next under it).
        const inserted: boolean[] = [];
        const check = (_: number, result: { inserted: boolean }) => void inserted.push(result.inserted);
        const mixed = [text("r3", 102), text("r4", 103)];
        await chained.store.writeStep({ ...step, messages: mixed, check });
        assert.deepEqual(inserted, [false, true]);
        for (const message of mixed) await single.store.writeStep({ ...step, messages: [message] });
        // An id stored, in this session or another: the chain of new ids writes nothing, and says so.
        await news.store.registry.create({ id: "t", name: "T", owner: "alice" });
        await news.store.writeStep({ ...step, sessionId: "t", messages: [text("elsewhere", 200)] });
        for (const held of [mixed, [text("elsewhere", 200), text("r4", 103)]])
          assert.equal(await news.store.timedMessages.appendNew({ ...step, messages: held }), false);
        assert.equal(await news.store.timedMessages.appendNew({ ...step, messages: [mixed[1]!] }), true);
        // A chain of one from a new head, as a single append writes it.
        for (const { store } of [single, news])
          await store.registry.create({ id: "u", name: "U", owner: "alice" });
        const first = [text("u1", 300)];
        await single.store.writeStep({ ...step, sessionId: "u", messages: first });
        assert.equal(
          await news.store.timedMessages.appendNew({ ...step, sessionId: "u", messages: first }),
          true,
        );
        assert.deepEqual(
          await rowsOf(pool, news.schema, "u", keyed),
          await rowsOf(pool, single.schema, "u", keyed),
        );
        const singles = await rowsOf(pool, single.schema, "s", keyed);
        assert.deepEqual(await rowsOf(pool, chained.schema, "s", keyed), singles);
        assert.deepEqual(await rowsOf(pool, news.schema, "s", keyed), singles);
        const read = await chained.store.session("s").getHistory();
        assert.deepEqual(
          read.map((m) => m.id),
          ["r1", "r2", "r3", "r4"],
        );
        assert.equal(read[1]?.parts[0]?.type === "text" && read[1].parts[0].text, again[1]?.parts[0]?.text);
        const hits = await chained.store.searchMessages("tree number 101", { sessionId: "s" });
        assert.equal(hits[0]?.id, "r2");
        // Another owner's guard refuses the whole chain: nothing written.
        await assert.rejects(
          chained.store.writeStep({ ...step, owner: "bob", messages: [text("x1", 1), text("x2", 2)] }),
          (error) => error instanceof SessionError && error.code === "NOT_FOUND",
        );
        assert.equal((await chained.store.session("s").getHistory()).length, 4);
        await assert.rejects(
          news.store.timedMessages.appendNew({ ...step, owner: "bob", messages: [text("x1", 1)] }),
          (error) => error instanceof SessionError && error.code === "NOT_FOUND",
        );
        assert.equal((await news.store.session("s").getHistory()).length, 4);
        for (const { store } of [chained, single, news]) await store.close();
      });
    }

    test("concurrent chains of one session build one path, each chain whole", async () => {
      const schema = `agent_chain_race_${process.pid}`;
      schemas.push(schema);
      await dropSchema(pool as never, schema);
      const store = await PostgresStore.open(pool as never, { schema });
      await store.registry.create({ id: "r", name: "R" });
      const step = { sessionId: "r", parentId: undefined, guard: false };
      await Promise.all(
        Array.from({ length: 8 }, (_, c) =>
          store.writeStep({ ...step, messages: [0, 1, 2].map((k) => text(`c${c}-${k}`, c * 3 + k)) }),
        ),
      );
      const path = (await store.session("r").getHistory()).map((m) => m.id);
      assert.equal(path.length, 24);
      for (let i = 0; i < 24; i += 3) {
        const chain = path[i]?.split("-")[0];
        assert.deepEqual(
          path.slice(i, i + 3),
          [0, 1, 2].map((k) => `${chain}-${k}`),
        );
      }
      // The running sums and depths along the one path, and the head's count.
      const { rows } = await pool.query(
        `SELECT m.depth, m.cum_bytes, (SELECT sum(a.bytes) FROM ${schema}.agent_messages a WHERE a.depth <= m.depth) AS sum
         FROM ${schema}.agent_messages m ORDER BY m.depth`,
      );
      rows.forEach((row, depth) => {
        assert.equal(Number(row.depth), depth);
        assert.equal(Number(row.cum_bytes), Number(row.sum));
      });
      const [head] = (await pool.query(`SELECT message_count FROM ${schema}.agent_session_heads`)).rows;
      assert.equal(Number(head?.message_count), 24);
      await store.close();
    });
  });
