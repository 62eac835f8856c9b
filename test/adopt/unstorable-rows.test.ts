import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import pg from "pg";
import { SqliteStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import type { AdoptionReport } from "../../src/store/adopt/adopt.js";
import { dropSchema, PG_URL, postgresUnavailable } from "../fixtures/postgres-db.js";
import { REFERENCE_POSTGRES_DDL, ref, text } from "../fixtures/reference-data.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

// Rows the reference stored without checking them (or a user wrote into its tables) that our stores cannot hold:
// each is reported and left in place, everything else is adopted, and the store opens (it used to throw on every
// open, so one such row made the database unusable).

const ids = (messages: { id: string }[]) => messages.map((m) => m.id);
const json = (id: string, role = "user") => JSON.stringify(text(id, `text of ${id}`, role));
const LONG = "x".repeat(1100);
/** The reason each rejected row was given, by `table:` and the first 20 characters of its id. */
const reasons = (report: AdoptionReport | null | undefined) =>
  new Map(report?.rejected.map((r) => [`${r.table}:${r.id.slice(0, 20)}`, r.reason]));
const reasonIn = (report: AdoptionReport | null | undefined, table: string) =>
  report?.rejected.find((r) => r.table === table)?.reason ?? "";

describe("reference rows our stores cannot hold (SQLite, sql tag)", () => {
  test("are reported and left in place; the rest is adopted, spliced, and the store opens again", async () => {
    const agent = sqlTagAgent();
    const sql = agent as never;
    const manager = ref.SessionManager.create(sql);
    const chat = manager.create("chat");
    await manager.append(chat.id, text("u1", "first"));
    // The reference inserts the row, then fails reading `parts`: the row without parts is stored.
    await assert.rejects(manager.append(chat.id, { id: "np", role: "user", content: "hi" } as never));
    await manager.append(chat.id, text("after-np", "child of the row without parts"));
    await manager.append(chat.id, text(LONG, "an id over 1,024 bytes"));
    await manager.append(chat.id, text("after-long", "child of the long id"));
    // The reference's updateMessage rewrites the JSON, never the role column: the JSON's role is the message's.
    await manager.append(chat.id, text("edited", "was a user message"));
    const reference = new ref.AgentSessionProvider(sql, chat.id);
    await reference.updateMessage(text("edited", "now an assistant message", "assistant"));
    await manager.addCompaction(chat.id, "overlay of nothing", "", "");
    manager.addUsage(chat.id, 0.5, 1, 0.01);
    const notes = new ref.AgentSearchProvider(sql);
    notes.init("notes");
    await notes.set("", "an entry without a key");
    await notes.set("kept", "a good entry");
    const insert = agent.db.prepare(
      "INSERT INTO assistant_messages (id, session_id, parent_id, role, content) VALUES (?, ?, ?, 'user', ?)",
    );
    insert.run("nj", chat.id, "edited", "not json");
    insert.run("other", chat.id, "nj", json("not-other"));
    insert.run("tip", chat.id, "other", json("tip"));
    insert.run("lost", "y".repeat(1100), null, json("lost"));

    const store = new SqliteStore(agent);
    const report = store.adopted;
    assert.ok(report);
    const why = reasons(report);
    assert.match(why.get("assistant_messages:np") ?? "", /needs an array of parts/);
    assert.match(why.get(`assistant_messages:${LONG.slice(0, 20)}`) ?? "", /at most 1024 bytes/);
    assert.match(why.get("assistant_messages:nj") ?? "", /not valid JSON/);
    assert.match(why.get("assistant_messages:other") ?? "", /whose id is "not-other"/);
    assert.match(why.get("assistant_messages:*") ?? "", /session id must be at most 1024 bytes/);
    assert.match(reasonIn(report, "assistant_compactions"), /start of overlay/);
    assert.match(why.get(`assistant_sessions:${chat.id.slice(0, 20)}`) ?? "", /whole number/);
    assert.match(why.get("cf_agents_search_entries:notes/") ?? "", /entry key/);
    assert.equal(report.rejectedCount, 8);
    assert.equal(report.differingCount, 0);
    // A long id is cut in the report (the report is stored as one value).
    assert.ok(report.rejected.every((r) => r.id.length <= 257 && r.sessionId.length <= 257));
    // Children of a row left behind hang under its parent, as the reference's reads skip it.
    const s = store.session(chat.id);
    assert.deepEqual(ids(await s.getHistory()), ["u1", "after-np", "after-long", "edited", "tip"]);
    assert.equal((await s.getMessage("edited"))?.role, "assistant");
    assert.equal(await store.entries.countEntries("notes"), 1);
    await store.close();

    // Opening again works (the adoption is recorded); an explicit run reports the same rows again.
    const again = new SqliteStore(agent);
    assert.equal(again.adopted, null);
    const rerun = await again.adoptReference();
    assert.equal(rerun?.rejectedCount, 8);
    assert.deepEqual(rerun?.messages, { inserted: 0, skipped: 5 });
    await again.close();
  });

  test("a parent cycle is broken once: every row adopted once, none reported as differing", async () => {
    const agent = sqlTagAgent();
    await new ref.AgentSessionProvider(agent as never, "s").appendMessage(text("base", "base"));
    const insert = agent.db.prepare(
      "INSERT INTO assistant_messages (id, session_id, parent_id, role, content) VALUES (?, 's', ?, 'user', ?)",
    );
    insert.run("a", "b", json("a"));
    insert.run("b", "a", json("b"));
    insert.run("c", "a", json("c"));
    insert.run("self", "self", json("self"));
    const store = new SqliteStore(agent);
    assert.deepEqual(store.adopted?.messages, { inserted: 5, skipped: 0 });
    assert.equal(store.adopted?.verified, 5);
    assert.equal(store.adopted?.differingCount, 0);
    assert.deepEqual(ids(await store.session("s").getBranches("a")), ["b", "c"]);
    await store.close();
  });
});

const unavailable = await postgresUnavailable();
const SCHEMA = `agent_session_test_unstorable_${process.pid}`;

describe("reference rows our stores cannot hold (Postgres)", { skip: unavailable ?? false }, () => {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2, options: `-c search_path=${SCHEMA}` });
  after(async () => {
    await dropSchema(pool, SCHEMA);
    await pool.end();
  });

  test("are reported and left in place; the rest is adopted and the store opens again", async () => {
    await dropSchema(pool, SCHEMA);
    await pool.query(`CREATE SCHEMA ${SCHEMA}`);
    await pool.query(REFERENCE_POSTGRES_DDL);
    const insert = (id: string, session: string, parent: string | null, content: string, at: number) =>
      pool.query(
        `INSERT INTO assistant_messages (id, session_id, parent_id, role, content, created_at)
         VALUES ($1, $2, $3, 'user', $4, now() - make_interval(secs => $5))`,
        [id, session, parent, content, 100 - at],
      );
    await insert("u1", "s", null, json("u1"), 1);
    await insert("np", "s", "u1", '{"id":"np","role":"user"}', 2);
    await insert("after-np", "s", "np", json("after-np"), 3);
    await insert("nj", "s", "after-np", "not json", 4);
    // The newest childless row, the reference's latest leaf, has an id we cannot store.
    await insert(LONG, "s", "nj", json(LONG), 5);
    await insert("lost", "y".repeat(1100), null, json("lost"), 6);
    await insert("a", "cycle", "b", json("a"), 7);
    await insert("b", "cycle", "a", json("b"), 8);
    await pool.query(
      `INSERT INTO assistant_compactions (id, session_id, summary, from_message_id, to_message_id)
       VALUES ('c1', 's', 'summary', '', '')`,
    );
    await pool.query(`INSERT INTO cf_agents_context_blocks (label, content) VALUES ($1, 'c')`, [
      "k".repeat(2100),
    ]);
    await pool.query(`INSERT INTO cf_agents_search_entries (label, key, content) VALUES ('notes', '', 'c')`);

    const store = await PostgresStore.open(pool, { schema: SCHEMA });
    const report = store.adopted;
    const why = reasons(report);
    assert.match(why.get("assistant_messages:np") ?? "", /needs an array of parts/);
    assert.match(why.get("assistant_messages:nj") ?? "", /not valid JSON/);
    assert.match(why.get(`assistant_messages:${LONG.slice(0, 20)}`) ?? "", /at most 1024 bytes/);
    assert.match(why.get("assistant_messages:*") ?? "", /session id/);
    assert.match(why.get("assistant_compactions:c1") ?? "", /start of overlay/);
    assert.match(why.get(`cf_agents_context_blocks:${"k".repeat(20)}`) ?? "", /block key/);
    assert.match(why.get("cf_agents_search_entries:notes/") ?? "", /entry key/);
    assert.equal(report?.rejectedCount, 7);
    assert.equal(report?.differingCount, 0);
    assert.deepEqual(report?.messages, { inserted: 4, skipped: 0 });
    assert.deepEqual(ids(await store.session("s").getHistory()), ["u1", "after-np"]);
    assert.deepEqual(ids(await store.session("cycle").getHistory()).sort(), ["a", "b"]);
    await store.close();

    const again = await PostgresStore.open(pool, { schema: SCHEMA });
    assert.equal(again.adopted, null);
    assert.equal((await again.adoptReference())?.rejectedCount, 7);
    await again.close();
  });
});
