// Reference counts of shared payloads under concurrency (Postgres, several pool connections): a payload another
// session links while this one collects it must survive (upstream's #2232 deleted it), and the last release drops it.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import pg from "pg";
import type { SessionMessage } from "../src/contract/message.js";
import { PostgresStore } from "../src/postgres/index.js";
import { CITUS_URL, citusSchema } from "./fixtures/citus-db.js";
import { dropSchema, postgresUnavailable, testClient, testPool } from "./fixtures/postgres-db.js";

const SCHEMA = `agent_session_test_attachments_${process.pid}`;
const url = `data:image/png;base64,${Buffer.alloc(30_000, 5).toString("base64")}`;

function withImage(id: string): SessionMessage {
  return {
    id,
    role: "user",
    parts: [{ type: "file", mediaType: "image/png", url }],
  } as unknown as SessionMessage;
}

/** Where the cases run: the server (a schema per case) or the cluster (one distributed schema, emptied). */
interface Target {
  name: string;
  skip: string | false;
  /**
   * Stores on an empty place of the case `tag`, on the target's pool or on `connection`; a connection of its own;
   * the place dropped or emptied after the case.
   */
  place(tag: string): Promise<{
    open(connection?: { query: pg.Client["query"] }): Promise<PostgresStore>;
    client(): pg.Client;
  }>;
}

function cases({ name, skip, place }: Target): void {
  test(`${name}: linking and collecting the same payload at once never loses it`, { skip }, async () => {
    const { open } = await place("");
    const store = await open();
    for (let round = 0; round < 25; round++) {
      // One row of "b" points at the payload; "a" appends a second pointer while "b" deletes (or clears) its own.
      await store.session("b").appendMessage(withImage(`b${round}`));
      await Promise.all([
        store.session("a").appendMessage(withImage(`a${round}`)),
        round % 2 === 0
          ? store.session("b").deleteMessages([`b${round}`])
          : store.session("b").clearMessages(),
        store.session(`c${round}`).appendMessage(withImage("c")),
        store.session(`c${round}`).clearMessages(),
      ]);
      const back = await store.session("a").getMessage(`a${round}`);
      assert.equal((back?.parts[0] as { url?: string } | undefined)?.url, url, `round ${round}`);
      assert.equal((await store.attachments.stats()).count, 1);
    }
    // The concurrent clears of "c…" may have run before their appends: those rows still hold the payload.
    for (let round = 0; round < 25; round++) {
      assert.equal((await store.attachments.stats()).count, 1);
      await store.session(`c${round}`).clearMessages();
    }
    await store.session("b").clearMessages();
    await store.session("a").clearMessages();
    assert.equal((await store.attachments.stats()).count, 0);
    await store.close();
  });

  for (const op of ["clearMessages", "deleteMessages"] as const) {
    test(`${name}: ${op} racing the append that creates its session deletes nothing it did not release`, {
      skip,
    }, async () => {
      const { open, client } = await place(`_${op.toLowerCase()}`);
      const raw = client();
      await raw.connect();
      after(() => raw.end());
      const other = await open();
      // The writing store's connection runs the other store's append right after a locking read found no session:
      // the moment a commit elsewhere makes the session appear between the write's statements.
      let race: (() => Promise<unknown>) | undefined;
      const connection = {
        async query(text: string, values?: unknown[]) {
          const result = await raw.query(text, values);
          if (race && /FOR UPDATE/.test(text) && result.rows.length === 0) {
            const run = race;
            race = undefined;
            await run();
          }
          return result;
        },
      };
      const writer = await open(connection as { query: pg.Client["query"] });
      race = () => other.session("x").appendMessage(withImage("m1"));
      if (op === "clearMessages") await writer.session("x").clearMessages();
      else await writer.session("x").deleteMessages(["m1"]);
      assert.equal(race, undefined, "the race ran");
      // The write saw no session, so it is ordered before the append: the message and its payload are both kept.
      const kept = await other.session("x").getHistory();
      assert.deepEqual(
        kept.map((m) => m.id),
        ["m1"],
      );
      assert.equal((await other.attachments.stats()).count, 1);
      await writer.session("x").clearMessages();
      assert.equal((await other.attachments.stats()).count, 0);
      await writer.close();
      await other.close();
    });
  }
}

const unavailable = await postgresUnavailable();
const pool = unavailable ? undefined : testPool(8);
if (pool) after(() => pool.end());
cases({
  name: "postgres",
  skip: unavailable ?? false,
  place: async (tag) => {
    const schema = `${SCHEMA}${tag}`;
    await dropSchema(pool!, schema);
    after(() => dropSchema(pool!, schema));
    return {
      open: (connection) => PostgresStore.open(connection ?? pool!, { schema }),
      client: testClient,
    };
  },
});

// The cluster: its routed appends and deletes race the same way.
const cluster = await citusSchema("attachments", 8);
if (cluster) {
  cases({
    name: "citus",
    skip: false,
    place: async () => {
      await cluster.reset();
      return {
        open: async (connection) =>
          connection
            ? PostgresStore.open(connection, { schema: cluster.schema, distributed: true })
            : cluster.store(),
        client: () => new pg.Client({ connectionString: CITUS_URL }),
      };
    },
  });
}
