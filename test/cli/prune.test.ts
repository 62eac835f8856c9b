// `agent-session prune` on the library's retention sweep: --owner keeps to one owner's sessions, --keep-newest
// keeps each owner's newest, pinned sessions stay, and it prints the sweep's receipt (text and --json). On a
// SQLite file and on Postgres (skipped with the reason when the server is unreachable, outside CI).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { SessionStore } from "../../src/contract/store.js";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { dropSchema, PG_URL, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());

/** Last activity per session (null: now); b2 is pinned. */
const SESSIONS = [
  ["a1", "alice", "2020-01-01"],
  ["a2", "alice", "2020-02-01"],
  ["a3", "alice", "2020-03-01"],
  ["b1", "bob", "2020-01-01"],
  ["b2", "bob", "2020-01-02"],
  ["u1", null, "2020-01-01"],
  ["u2", null, null],
] as const;

/** Registers the sessions, then moves their activity back (`backdate`: after the writes, which bump it). */
async function seed(store: SessionStore, backdate: (id: string, at: string) => Promise<void>): Promise<void> {
  const manager = new SessionManager(store);
  for (const [id, owner] of SESSIONS) {
    await manager.create(id, { id, owner });
    await manager
      .getSession(id)
      .appendMessage({ id: `${id}-m`, role: "user", parts: [{ type: "text", text: id }] });
  }
  await manager.pin("b2");
  for (const [id, , at] of SESSIONS) if (at !== null) await backdate(id, `${at}T00:00:00.000Z`);
  await store.close();
}

interface Backend {
  name: string;
  skip: string | false;
  /** The CLI's options naming the store. */
  target: string[];
  setup(): Promise<void>;
  teardown(): Promise<void>;
}

const pgUnavailable = await postgresUnavailable();
if (pgUnavailable) console.info(`# skipping prune on Postgres: ${pgUnavailable}`);
const schema = `cli_prune_${process.pid}`;
const pool = pgUnavailable ? undefined : testPool(2);
after(() => pool?.end());

const db = tmp.path("prune.db");
const backends: Backend[] = [
  {
    name: "SQLite",
    skip: false,
    target: ["--db", db],
    async setup() {
      const store = new SqliteStore(db);
      await seed(store, async (id, at) =>
        store.driver.run("UPDATE agent_sessions SET updated_at = ? WHERE id = ?", [at, id]),
      );
    },
    async teardown() {},
  },
  {
    name: "Postgres",
    skip: pgUnavailable ?? false,
    target: ["--db", PG_URL, "--schema", schema],
    async setup() {
      await dropSchema(pool!, schema);
      const store = await PostgresStore.open(pool!, { schema });
      await seed(store, async (id, at) => {
        await pool!.query(`UPDATE "${schema}".agent_sessions SET updated_at = $1 WHERE id = $2`, [at, id]);
      });
    },
    async teardown() {
      if (pool) await dropSchema(pool, schema);
    },
  },
];

interface PruneJson {
  dryRun: boolean;
  owner?: string;
  keepNewest?: number;
  examined: number;
  candidates: number;
  sessions: { id: string }[];
  deleted: number;
  skipped: number;
  erased: { sessionIds: string[]; sessions: number; messages: number } | null;
}

for (const backend of backends) {
  describe(`prune on ${backend.name}`, { skip: backend.skip }, () => {
    const { target } = backend;
    before(() => backend.setup());
    after(() => backend.teardown());

    const ids = async () =>
      parseJson<{ id: string }[]>(await runCli(["ls", "--json", ...target]))
        .map((s) => s.id)
        .sort();

    test("prune --owner --keep-newest erases only that owner's older sessions, after a dry run that erases nothing", async () => {
      const args = [
        "prune",
        "--older-than",
        "30d",
        "--owner",
        "alice",
        "--keep-newest",
        "1",
        "--json",
        ...target,
      ];
      const dry = parseJson<PruneJson>(await runCli([...args, "--dry-run"]));
      assert.equal(dry.dryRun, true);
      assert.equal(dry.owner, "alice");
      assert.equal(dry.keepNewest, 1);
      assert.equal(dry.examined, 3, "only alice's sessions are examined");
      assert.deepEqual(
        dry.sessions.map((s) => s.id),
        ["a2", "a1"],
        "newest activity first; a3, her newest, is kept",
      );
      assert.equal(dry.deleted, 0);
      assert.equal(dry.erased, null);
      assert.equal((await ids()).length, 7);

      const run = parseJson<PruneJson>(await runCli(args));
      assert.equal(run.deleted, 2);
      assert.equal(run.skipped, 0);
      assert.deepEqual(run.erased?.sessionIds.sort(), ["a1", "a2"]);
      assert.equal(run.erased?.sessions, 2);
      assert.equal(run.erased?.messages, 2);
      assert.deepEqual(await ids(), ["a3", "b1", "b2", "u1", "u2"]);
    });

    test("prune without --owner erases every old unpinned session and prints the receipt", async () => {
      const out = await runCli(["prune", "--older-than", "30d", ...target]);
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stdout, /Erased 3 sessions inactive since/);
      assert.match(out.stdout, /Erased 3 messages, 0 compactions/);
      assert.deepEqual(await ids(), ["b2", "u2"], "b2 is pinned, u2 is recent");
      assert.match(
        (await runCli(["prune", "--older-than", "30d", ...target])).stdout,
        /No session to prune: none unpinned has been inactive since .*; 2 sessions examined\./,
      );
    });

    test("prune --older-than 0s takes every unpinned session, the one active a moment ago too", async () => {
      const dry = await runCli(["prune", "--older-than", "0s", "--dry-run", "--json", ...target]);
      assert.equal(dry.code, 0, dry.stderr);
      assert.deepEqual(
        parseJson<PruneJson>(dry).sessions.map((s) => s.id),
        ["u2"],
        "b2 is pinned",
      );
      const bad = await runCli(["prune", "--older-than", "-1s", ...target]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--older-than must look like 30d/);
    });

    test("prune refuses a bad --keep-newest or --owner", async () => {
      const bad = await runCli(["prune", "--older-than", "30d", "--keep-newest", "-1", ...target]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--keep-newest must be a whole number >= 0/);
      const owner = await runCli(["prune", "--older-than", "30d", "--owner", "a\u0001b", ...target]);
      assert.equal(owner.code, 2);
      assert.match(owner.stderr, /--owner must be a non-empty string/);
    });
  });
}
