// A real eve agent (agent-app.ts: `eve dev`, eve's mock model, one memory slot on agent-session/eve) driven through
// eve's own client: a turn that is captured, a remember tool call, a compaction, a second eve session whose first
// turn recalls the first session's, forget through the model's tools, eve's clear() leaving the store as it was and
// eraseEveSession erasing what the cleared session left; then eraseOwner + purge leave no byte on disk. SQLite and
// Postgres (and Citus when a cluster answers).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import pg from "pg";
import { eraseEveSession } from "../../src/eve/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { CITUS_URL, citusUnavailable, markersOnCluster } from "../fixtures/citus-db.js";
import { ownDatabaseOnDemand } from "../fixtures/own-database.js";
import { dropSchema, postgresUnavailable } from "../fixtures/postgres-db.js";
import { occurrences } from "../helpers/encryption.js";
import { markersInRelations, purgeUntilComplete, sqliteFiles, total } from "../helpers/purge.js";
import { startEve, stopEve, writeEveApp } from "./agent-app.js";
import { EVE_SKIP } from "./contexts.js";

const FIRST = "zqxeveagentfirstq";
const NOTE = "zqxeveagentnoteq";
/** eve dev's principal (local development: `byPrincipal` scopes it as "local-dev"). */
const OWNER = "local-dev";

interface Backend {
  name: string;
  skip(): Promise<string | null>;
  make(dir: string): Promise<{
    env: Record<string, string>;
    open(): Promise<SqliteStore | PostgresStore>;
    onDisk(word: string): Promise<number>;
    end(): Promise<void>;
  }>;
}

const postgresLike = (
  name: string,
  urlOf: () => Promise<string>,
  distributed: boolean,
  skip: () => Promise<string | null>,
): Backend => ({
  name,
  skip,
  make: async () => {
    const url = await urlOf();
    const schema = `eve_agent_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    return {
      env: { EVE_DOOR_PG_URL: url, EVE_DOOR_PG_SCHEMA: schema, EVE_DOOR_CITUS: distributed ? "1" : "0" },
      open: async () => PostgresStore.open(pool, { schema, distributed }),
      onDisk: async (word) =>
        total(
          distributed
            ? await markersOnCluster(pool, schema, word)
            : await markersInRelations(pool, schema, word),
        ),
      end: async () => {
        await dropSchema(pool, schema);
        await pool.end();
      },
    };
  },
});

const backends: Backend[] = [
  {
    name: "SQLite",
    skip: async () => null,
    make: async (dir) => {
      const path = join(dir, "memory.db");
      return {
        env: { EVE_DOOR_SQLITE: path },
        open: async () => new SqliteStore(path),
        onDisk: async (word) => occurrences(sqliteFiles(path), word),
        end: async () => undefined,
      };
    },
  },
  // On a database of its own: other test files' transactions do not hold its purge back.
  postgresLike("Postgres", ownDatabaseOnDemand("eve_agent"), false, postgresUnavailable),
  postgresLike("Citus", async () => CITUS_URL, true, citusUnavailable),
];

const textOf = async (response: { result(): Promise<{ message: string | undefined }> }) =>
  (await response.result()).message ?? "";

for (const backend of backends) {
  const reason = EVE_SKIP || ((await backend.skip()) ?? false);
  describe(`a real eve agent on agent-session/eve: ${backend.name}`, { skip: reason }, () => {
    test("recalled across sessions, remembered, compacted, forgotten; clear() leaves it, erasure removes it", async () => {
      const dir = mkdtempSync(join(tmpdir(), "eve-agent-"));
      const db = await backend.make(dir);
      writeEveApp(dir);
      const port = 4400 + (process.pid % 400);
      const server = await startEve(dir, port, db.env);
      try {
        const { Client } = await import("eve/client");
        const client = new Client({ host: `http://127.0.0.1:${port}` });

        // Session 1: a turn, a remember tool call, a compaction.
        const one = await client.sessions.create({ message: `My favourite word is ${FIRST}` });
        assert.match(await textOf(one.response), /Recalled: \[agent-session memory\] facts/);
        const saved = await textOf(await one.session.send(`Remember: The user's pet is called ${NOTE}`));
        assert.match(saved, /Remembered as fact/);
        await one.session.compact();

        // Session 2: its first turn recalls session 1's turn and the remembered fact.
        const two = await client.sessions.create({ message: `Do you remember ${FIRST}?` });
        const recalled = await textOf(two.response);
        assert.match(recalled, new RegExp(`user.*My favourite word is ${FIRST}`));
        assert.match(recalled, new RegExp(NOTE));
        const forgot = await textOf(await two.session.send(`Forget: ${NOTE}`));
        assert.match(forgot, /Forgot fact/);
        const after = await textOf(await two.session.send(`Do you remember ${FIRST} and ${NOTE}?`));
        // The fact (and the note it was kept in) is gone; the conversation that asked for it stays recallable.
        assert.match(after, /No facts are known about the user yet/);

        // eve's clear() empties session 1's history in eve; the store still holds what it captured.
        await one.session.clear();
        const oneId = one.session.state.sessionId;
        stopEve(server);
        const store = await db.open();
        const manager = new SessionManager(store);
        const sessions = await manager.forOwner(OWNER).list();
        assert.equal(sessions.length, 2, JSON.stringify(sessions));
        // Every message captured once: none twice within a session (the compaction's capture overlapped the turns').
        for (const { id } of sessions) {
          const texts = (await manager.getHistory(id)).map((m) => `${m.role}:${JSON.stringify(m.parts)}`);
          assert.equal(new Set(texts).size, texts.length, JSON.stringify(texts));
        }
        const firstHits = await manager.forOwner(OWNER).search(FIRST);
        assert.ok(firstHits.length > 0);
        const cleared = await eraseEveSession(manager, OWNER, oneId);
        assert.equal(cleared.sessionIds.length, 1);
        assert.ok(
          (await manager.forOwner(OWNER).search(`favourite ${FIRST}`)).every(
            (hit) => !hit.content.startsWith("My favourite word"),
          ),
        );
        assert.ok((await db.onDisk(FIRST)) > 0, "session 2 still holds the word");
        await manager.eraseOwner(OWNER);
        assert.equal((await purgeUntilComplete(() => store.purge())).complete, true);
        await store.close();
        for (const word of [FIRST, NOTE])
          assert.equal(await db.onDisk(word), 0, `${word} on disk after erasure`);
      } finally {
        stopEve(server);
        await db.end();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
