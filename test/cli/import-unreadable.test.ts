// Import of an export holding unreadable messages (`raw` records: stored rows whose JSON no longer parses or lacks
// an id, role or parts). By
// default the file is refused before anything is written; --skip-unreadable leaves them out and keeps the rest of
// each conversation connected. SQLite target, and Postgres when the server answers.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { SqliteStore } from "../../src/index.js";
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import { postgresUnavailable, withSchemaUrl } from "../fixtures/postgres-db.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());

const skipPostgres = await postgresUnavailable();
if (skipPostgres) console.log(`Skipping the Postgres target: ${skipPostgres}`);

const text = (id: string) => ({ id, role: "user", parts: [{ type: "text", text: `text of ${id}` }] });

/** Damaged rows: a truncated write, text that is not JSON, JSON that is no object, and an object no read can use. */
const DAMAGE: Record<string, string> = {
  m2: '{"id":"m2","role":"us',
  m3: "not json",
  r1: "null",
  l3: '{"id":"l3","role":"user"}',
};

/**
 * deep: m1 → m2 → m3 → m4 → m5 (leaf), overlays m1..m3, m1..m4, m2..m5. root: r1 → r2 → r3 (leaf), r1 → r2b.
 * leaf: l1 → l2 → l3 (leaf), l1 → l2x (stored after l2, so it is the newest childless row once l3 is gone).
 * clean: c1 → c2.
 */
async function writeSource(path: string, damaged: boolean): Promise<void> {
  const store = new SqliteStore(path);
  try {
    const tree: [string, [string, string | null][]][] = [
      [
        "deep",
        [
          ["m1", null],
          ["m2", "m1"],
          ["m3", "m2"],
          ["m4", "m3"],
          ["m5", "m4"],
        ],
      ],
      [
        "root",
        [
          ["r1", null],
          ["r2", "r1"],
          ["r2b", "r1"],
          ["r3", "r2"],
        ],
      ],
      [
        "leaf",
        [
          ["l1", null],
          ["l2", "l1"],
          ["l2x", "l1"],
          ["l3", "l2"],
        ],
      ],
      [
        "clean",
        [
          ["c1", null],
          ["c2", "c1"],
        ],
      ],
    ];
    for (const [session, messages] of tree) {
      for (const [id, parent] of messages) await store.session(session).appendMessage(text(id), parent);
    }
    const deep = store.session("deep");
    await deep.addCompaction("to is unreadable", "m1", "m3");
    await deep.addCompaction("only the middle is unreadable", "m1", "m4");
    await deep.addCompaction("from is unreadable", "m2", "m5");
  } finally {
    await store.close();
  }
  if (!damaged) return;
  const db = new (loadBetterSqlite3())(path);
  try {
    const update = db.prepare("UPDATE agent_messages SET content = ? WHERE id = ?");
    for (const [id, content] of Object.entries(DAMAGE)) assert.equal(update.run(content, id).changes, 1);
  } finally {
    db.close();
  }
}

type Rec = { type: string; session?: string; id?: string; parent?: string | null; leaf?: string | null };

const records = (jsonl: string) =>
  jsonl
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Rec & Record<string, unknown>);

/** The export of a database, as text. */
async function exportOf(db: string): Promise<string> {
  const result = await runCli(["export", "--db", db]);
  assert.equal(result.code, 0, result.stderr);
  return result.stdout;
}

/** Each session's leaf, each message's parent and the overlays' ids, by session. */
function shape(jsonl: string) {
  const sessions: Record<
    string,
    { leaf: string | null; parents: Record<string, string | null>; overlays: string[] }
  > = {};
  for (const r of records(jsonl)) {
    if (r.type === "session") sessions[r.id!] = { leaf: r.leaf ?? null, parents: {}, overlays: [] };
    else if (r.type === "message") sessions[r.session!]!.parents[r.id!] = r.parent ?? null;
    else if (r.type === "compaction") sessions[r.session!]!.overlays.push(`${r.from}..${r.to}`);
  }
  return sessions;
}

interface Summary {
  messages: { inserted: number; skipped: number };
  compactions: { inserted: number; skipped: number };
  unreadable?: { session: string; messages: number; overlays: number }[];
}

const EXPECTED_SKIPS = [
  { session: "deep", messages: 2, overlays: 2 },
  { session: "leaf", messages: 1, overlays: 0 },
  { session: "root", messages: 1, overlays: 0 },
];

describe("import of an export with unreadable messages", { concurrency: true }, () => {
  const file = tmp.path("damaged.jsonl");
  const cleanFile = tmp.path("clean.jsonl");
  let exported = "";

  before(async () => {
    await writeSource(tmp.path("damaged.db"), true);
    await writeSource(tmp.path("clean.db"), false);
    for (const [db, out] of [
      ["damaged.db", file],
      ["clean.db", cleanFile],
    ] as const) {
      const result = await runCli(["export", "-o", out, "--db", tmp.path(db)]);
      assert.equal(result.code, 0, result.stderr);
    }
    exported = readFileSync(file, "utf8");
    const raw = records(exported).filter((r) => "raw" in r);
    assert.deepEqual(
      raw.map((r) => r.id),
      ["m2", "m3", "l3", "r1"],
      "the damaged rows travel as raw records",
    );
  });

  test("by default the file is refused before anything is written, naming the record and the flag", async () => {
    const target = tmp.path("refused.db");
    const line = records(exported).findIndex((r) => r.id === "m2") + 1;
    const result = await runCli(["import", file, "--db", target]);
    assert.equal(result.code, 1);
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(`line ${line}: message "m2" of session "deep" is unreadable .*nothing was imported`),
    );
    assert.match(result.stderr, /--skip-unreadable/);
    const json = await runCli(["import", file, "--json", "--db", target]);
    assert.equal((JSON.parse(json.stderr) as { error: { code: string } }).error.code, "INVALID_MESSAGE");
    assert.deepEqual(shape(await exportOf(target)), {}, "not even the sessions before the record");
  });

  test("--skip-unreadable re-points children past left-out messages, moves the leaf, drops their overlays", async () => {
    const target = tmp.path("skipped.db");
    const result = await runCli(["import", file, "--skip-unreadable", "--json", "--db", target]);
    assert.equal(result.code, 0, result.stderr);
    const summary = parseJson<Summary>(result);
    assert.deepEqual(summary.unreadable, EXPECTED_SKIPS);
    assert.deepEqual(summary.messages, { inserted: 11, skipped: 0 });
    assert.deepEqual(summary.compactions, { inserted: 1, skipped: 0 });
    const imported = shape(await exportOf(target));
    assert.deepEqual(imported.deep, {
      leaf: "m5",
      // Two left out in a row: m4 goes to m1; the overlay between kept endpoints stays.
      parents: { m1: null, m4: "m1", m5: "m4" },
      overlays: ["m1..m4"],
    });
    // A left-out root: its children become roots.
    assert.deepEqual(imported.root, { leaf: "r3", parents: { r2: null, r2b: null, r3: "r2" }, overlays: [] });
    // The leaf moves to its nearest kept ancestor, not to the newest childless message (l2x).
    assert.deepEqual(imported.leaf, { leaf: "l2", parents: { l1: null, l2: "l1", l2x: "l1" }, overlays: [] });
    assert.deepEqual(imported.clean, shape(exported).clean);
    // The history reads through the kept overlay to the leaf.
    const store = new SqliteStore(target);
    try {
      const history = await store.session("deep").getHistory();
      assert.deepEqual(
        history.map((m) => m.id.startsWith("compaction_") || m.id),
        [true, "m5"],
      );
    } finally {
      await store.close();
    }
    const again = parseJson<Summary>(
      await runCli(["import", file, "--skip-unreadable", "--json", "--db", target]),
    );
    assert.deepEqual(again.messages, { inserted: 0, skipped: 11 }, "idempotent");
    assert.deepEqual(again.unreadable, EXPECTED_SKIPS, "and says again what it left out");
  });

  test("the text output says what was left out, per session", async () => {
    const result = await runCli(["import", file, "--skip-unreadable", "--db", tmp.path("text.db")]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split("\n");
    assert.match(lines[0]!, /^Imported into .*: 4 sessions .*11 messages/);
    assert.deepEqual(lines.slice(1), [
      'Skipped in session "deep": 2 unreadable messages (their children re-attached to the nearest kept ancestor) and 2 overlays at them.',
      'Skipped in session "leaf": 1 unreadable message (its children re-attached to the nearest kept ancestor) and 0 overlays at them.',
      'Skipped in session "root": 1 unreadable message (its children re-attached to the nearest kept ancestor) and 0 overlays at them.',
    ]);
  });

  test("a file without unreadable messages imports as before, with or without the flag", async () => {
    const clean = readFileSync(cleanFile, "utf8");
    for (const flags of [[], ["--skip-unreadable"]]) {
      const target = tmp.path(`clean-${flags.length}.db`);
      const json = parseJson<Summary>(
        await runCli(["import", cleanFile, ...flags, "--json", "--db", target]),
      );
      assert.deepEqual(json.messages, { inserted: 15, skipped: 0 });
      assert.deepEqual(json.unreadable, flags.length > 0 ? [] : undefined);
      assert.equal(await exportOf(target), clean, "byte-identical round trip");
      const text = await runCli(["import", cleanFile, ...flags, "--db", target]);
      assert.equal(text.stdout.trimEnd().split("\n").length, 1, "no line about skipped messages");
    }
  });

  test("a Postgres target: the same refusal, and the same result as SQLite", {
    skip: skipPostgres ?? false,
  }, async () => {
    await withSchemaUrl(`agent_session_unreadable_${process.pid}`, async (url) => {
      const refused = await runCli(["import", file, "--db", url]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /message "m2" of session "deep" is unreadable.*--skip-unreadable/);
      assert.deepEqual(shape(await exportOf(url)), {}, "nothing written");
      const result = await runCli(["import", file, "--skip-unreadable", "--json", "--db", url]);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(parseJson<Summary>(result).unreadable, EXPECTED_SKIPS);
      const sqlite = tmp.path("compare.db");
      assert.equal((await runCli(["import", file, "--skip-unreadable", "--db", sqlite])).code, 0);
      assert.equal(await exportOf(url), await exportOf(sqlite));
    });
  });
});
