// An agent step of several messages on SQLite (sqlite/step.ts): each append after the first takes the head and
// parent the one before wrote, and the owner's key it looked up, without reading them again. Its rows must be what
// single appends write: the same steps go into two stores, one as written, one a message a step, and every stored
// column is compared (tree columns and skip pointers as ids, bytes, tokens and their sums, the head, the search
// index past a batch of the index), in clear and for an encrypted owner.
import assert from "node:assert/strict";
import { test } from "node:test";
import Database from "better-sqlite3";
import { SqliteStore } from "../src/sqlite/store.js";
import { chainText } from "./helpers/chain-messages.js";
import { randomKeyring } from "./helpers/encryption.js";

const text = chainText;

function rowsOf(db: Database.Database, sealed: boolean) {
  const rows = db
    .prepare(
      `SELECT m.id, p.id AS parent, m.role, ${sealed ? "" : "m.content, "}m.created_at, m.depth, j.id AS jump,
         m.jump_depth, m.bytes, m.cum_bytes, m.tokens, m.cum_tokens
       FROM agent_messages m LEFT JOIN agent_messages p ON p.seq = m.parent_seq
       LEFT JOIN agent_messages j ON j.seq = m.jump_seq ORDER BY m.seq`,
    )
    .all();
  const head = db
    .prepare(
      `SELECT l.id AS leaf, h.message_count FROM agent_session_heads h
       LEFT JOIN agent_messages l ON l.seq = h.leaf_seq`,
    )
    .all();
  return { rows, head };
}

for (const keyed of [false, true]) {
  test(`SQLite: a step's appends write what single appends write (${keyed ? "sealed" : "in clear"})`, async () => {
    const keyring = keyed ? randomKeyring(["alice"]) : undefined;
    const open = async () => {
      const log: string[] = [];
      const db = new Database(":memory:", { verbose: (sql: unknown) => log.push(String(sql)) });
      const store = new SqliteStore(db, keyring ? { keyring } : {});
      await store.registry.create({ id: "s", name: "S", owner: "alice" });
      return { db, store, log };
    };
    const chained = await open();
    const single = await open();
    const step = { sessionId: "s", parentId: undefined, guard: true, owner: "alice" };
    let at = 0;
    // 300 messages: the search index takes a batch (every 128) inside a step.
    for (const size of [3, 2, 5, 1, 9, 2, 40, 7, 4, 60, 8, 6, 90, 63]) {
      const messages = Array.from({ length: size }, () => text(`m${++at}`, at));
      chained.log.length = 0;
      await chained.store.writeStep({ ...step, messages });
      // One read of the head and parent a step, not one a message.
      const contexts = chained.log.filter((sql) => sql.includes("JOIN agent_search_state")).length;
      assert.equal(contexts, 1, `${size} messages`);
      // And one look-up of the owner's key (one more in a step that indexes a batch of the search index).
      const keys = chained.log.filter((sql) => sql.includes("FROM agent_owner_keys")).length;
      assert.ok(keys <= 2, `${size} messages: ${keys} key look-ups`);
      for (const message of messages) await single.store.writeStep({ ...step, messages: [message] });
    }
    // A duplicate inside a step: not inserted, the next appended under it.
    const inserted: boolean[] = [];
    const check = (_: number, result: { inserted: boolean }) => void inserted.push(result.inserted);
    const mixed = [text(`m${at}`, at), text("m-last", 999)];
    await chained.store.writeStep({ ...step, guard: false, messages: mixed, check });
    assert.deepEqual(inserted, [false, true]);
    for (const message of mixed) await single.store.writeStep({ ...step, guard: false, messages: [message] });
    assert.deepEqual(rowsOf(chained.db, keyed), rowsOf(single.db, keyed));
    for (const query of ["tree number 150", "word", "m-last"]) {
      const ids = async (store: SqliteStore) =>
        (await store.searchMessages(query, { sessionId: "s", limit: 20 })).map((hit) => hit.id);
      assert.deepEqual(await ids(chained.store), await ids(single.store), query);
    }
    const history = await chained.store.session("s").getHistory();
    assert.equal(history.length, at + 1);
    assert.equal(history[150]?.id, "m151");
    await chained.store.close();
    await single.store.close();
  });
}
