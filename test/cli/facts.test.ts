// `agent-session learn` and `agent-session facts` on a SQLite file: learning with an extractor module and with
// recorded facts, the listing (text and JSON, bounded with a visible "more" marker), failures and bad input.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { SessionManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir("agent-session-facts-");
after(() => tmp.remove());

// A plain extractor: each user message "I live in X" is a fact; one that contradicts a known fact supersedes it.
const extractorModule = tmp.path("extractor.mjs");
writeFileSync(
  extractorModule,
  `export async function extractor({ messages, known }) {
  return messages.flatMap((m) => {
    const place = /I live in (\\w+)/.exec(m.text)?.[1];
    if (m.role !== "user" || place === undefined) return [];
    const old = known.find((f) => f.about === "user" && f.text.startsWith("The user lives in"));
    const fact = { text: \`The user lives in \${place}.\`, about: "user", sources: [m.id] };
    return [old ? { ...fact, action: "supersede", target: old.id } : fact];
  });
}
`,
);
const failing = tmp.path("failing.mjs");
writeFileSync(failing, `export default async () => { throw new Error("quota exceeded"); };\n`);
const noExtractor = tmp.path("nothing.mjs");
writeFileSync(noExtractor, "export const nothing = 1;\n");
const recorded = tmp.path("trip.json");
writeFileSync(
  recorded,
  JSON.stringify([
    { text: "Caroline moved to Boston.", about: "Caroline", sources: ["u1-m0"], sessionId: "u1" },
    // LoCoMo's observations: `conv` is the session, `speaker` the `about`; the same message id elsewhere is ignored.
    { conv: "u1", observations: [{ speaker: "Mel", text: "Mel paints lakes.", sources: ["u1-m1"] }] },
    { conv: "b1", observations: [{ speaker: "Bob", text: "Not in u1.", sources: ["u1-m1"] }] },
  ]),
);
const badRecorded = tmp.path("bad.json");
writeFileSync(badRecorded, JSON.stringify([{ text: "no sources" }]));

const db = tmp.path("facts.db");
const user = (id: string, text: string) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text }],
});

/** alice: a1, a2 (a2 says she moved); bob: b1; nobody: u1. */
before(async () => {
  const store = new SqliteStore(db);
  const manager = new SessionManager(store);
  const turns: Record<string, string[]> = {
    a1: ["I live in Paris", "Nice weather today"],
    a2: ["I live in Berlin now"],
    b1: ["I live in Rome"],
    u1: ["Caroline moved to Boston", "Mel paints lakes"],
  };
  for (const [id, texts] of Object.entries(turns)) {
    await manager.create(id, { id, owner: id.startsWith("a") ? "alice" : id === "b1" ? "bob" : null });
    for (const [i, text] of texts.entries())
      await manager.getSession(id).appendMessage(user(`${id}-m${i}`, text));
  }
  await store.close();
});

interface Listed {
  scope: { owner?: string; sessionId?: string };
  facts: {
    text: string;
    status: string;
    about: string | null;
    observedAt: string;
    producer: string;
    sources: { sessionId: string; messageId: string }[];
    supersededBy: string | null;
  }[];
  more: number;
  moreCounted: boolean;
}

describe("agent-session learn and facts", () => {
  test("learn --owner runs an extractor module with progress; facts lists what it learned, superseded on demand", async () => {
    const learned = await runCli([
      "learn",
      "--db",
      db,
      "--owner",
      "alice",
      "--extractor",
      extractorModule,
      "--progress",
    ]);
    assert.equal(learned.code, 0, learned.stderr);
    assert.match(
      learned.stdout,
      /^Learned from 3 messages of 2 sessions in 2 batches: 2 added, 1 superseded, 0 invalidated, 0 duplicates dropped, 0 refused; 0 batches skipped\.\n$/,
    );
    assert.match(learned.stderr, /learn \[.*\] 100% \| 2\/2 sessions/);

    const text = await runCli(["facts", "--db", db, "--owner", "alice"]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Facts of owner alice, newest first \(current only\):/);
    assert.match(
      text.stdout,
      /\] current {2}about user {2}id \S+ {2}\(function:extractor\)\n {2}The user lives in Berlin\.\n {2}sources: a2\/a2-m0\n/,
    );
    assert.doesNotMatch(text.stdout, /Paris/);

    const all = parseJson<Listed>(
      await runCli(["facts", "--db", db, "--session", "a1", "--all-status", "--json"]),
    );
    assert.deepEqual(all.scope, { owner: "alice" });
    assert.deepEqual(
      all.facts.map((f) => [f.text, f.status]),
      [
        ["The user lives in Berlin.", "current"],
        ["The user lives in Paris.", "superseded"],
      ],
    );
    assert.deepEqual(all.facts[1]?.sources, [{ sessionId: "a1", messageId: "a1-m0" }]);
    assert.match(all.facts[0]?.observedAt ?? "", /^\d{4}-\d\d-\d\dT/);
    assert.equal(all.more, 0);

    // The marks keep what was learned: a second run reads nothing.
    const again = parseJson<{ messages: number; added: number; sessions: number }>(
      await runCli(["learn", "--db", db, "--owner", "alice", "--extractor", extractorModule, "--json"]),
    );
    assert.deepEqual([again.sessions, again.messages, again.added], [2, 0, 0]);
  });

  test("learn --recorded replays a facts file (flat and LoCoMo's shape) without a model", async () => {
    const learned = parseJson<{ added: number; skipped: unknown[] }>(
      await runCli(["learn", "--db", db, "--session", "u1", "--recorded", recorded, "--json"]),
    );
    assert.deepEqual([learned.added, learned.skipped], [2, []]);
    const listed = parseJson<Listed>(await runCli(["facts", "--db", db, "--session", "u1", "--json"]));
    assert.deepEqual(listed.scope, { sessionId: "u1" });
    assert.deepEqual(
      listed.facts.map((f) => [f.text, f.about, f.producer, f.sources.map((s) => s.messageId)]).sort(),
      [
        ["Caroline moved to Boston.", "Caroline", "recorded:trip", ["u1-m0"]],
        ["Mel paints lakes.", "Mel", "recorded:trip", ["u1-m1"]],
      ],
    );
  });

  test("facts is bounded by --limit and says how many more there are", async () => {
    const text = await runCli(["facts", "--db", db, "--session", "u1", "--limit", "1"]);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout.match(/^ {2}sources:/gm)?.length, 1);
    assert.match(text.stdout, /\n… 1 more current fact not shown \(raise --limit, at most 1000\)\n$/);
    const json = parseJson<Listed>(
      await runCli(["facts", "--db", db, "--session", "u1", "--limit", "1", "--json"]),
    );
    assert.deepEqual([json.facts.length, json.more, json.moreCounted], [1, 1, true]);
    const none = await runCli(["facts", "--db", db, "--owner", "bob"]);
    assert.equal(none.stdout, "No current facts of owner bob.\n");
  });

  test("a batch that fails every try is skipped, listed with the extractor's error, and exits 1", async () => {
    const result = await runCli([
      "learn",
      "--db",
      db,
      "--session",
      "b1",
      "--extractor",
      failing,
      "--max-attempts",
      "1",
    ]);
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      /1 batch skipped\.\nSkipped after every try .*\n {2}b1 seq \d+-\d+ \(1 try\): quota exceeded\n$/,
    );
    assert.equal(result.stderr, "agent-session: 1 batch failed every try and was skipped: quota exceeded\n");
  });

  test("bad input is one clear line", async () => {
    const cases: [string[], number, RegExp][] = [
      [["learn", "--session", "nope", "--extractor", extractorModule], 1, /session "nope" not found/],
      [
        ["learn", "--owner", "carol", "--extractor", extractorModule],
        1,
        /owner "carol" has no registered sessions/,
      ],
      [
        ["learn", "--all", "--extractor", noExtractor],
        1,
        /nothing\.mjs must export an extractor \(named "extractor" or default\)/,
      ],
      [
        ["learn", "--all", "--recorded", badRecorded],
        1,
        /bad\.json: \[0\]\.sources must be a non-empty array of message ids/,
      ],
      [
        ["learn", "--extractor", extractorModule],
        2,
        /learn needs one of --session <id>, --owner <id> or --all/,
      ],
      [["learn", "--all"], 2, /learn needs --extractor <module> or --recorded <file\.json>/],
      [
        ["learn", "--all", "--extractor", extractorModule, "--window", "0"],
        2,
        /--window must be a whole number from 1 to 200/,
      ],
      [["facts"], 2, /facts needs --session <id> or --owner <id>/],
      [["facts", "--session", "nope"], 1, /session "nope" not found/],
    ];
    for (const [args, code, message] of cases) {
      const result = await runCli([...args, "--db", db]);
      assert.equal(result.code, code, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message, args.join(" "));
      assert.equal(result.stderr.split("\n").length, 2, `one line: ${result.stderr}`);
    }
  });

  test("--help lists learn and facts", async () => {
    const help = await runCli(["--help"]);
    assert.match(help.stdout, /\n {2}learn +learn facts from the messages not learned yet/);
    assert.match(help.stdout, /\n {2}facts +list the facts learned for an owner or a session/);
  });
});
