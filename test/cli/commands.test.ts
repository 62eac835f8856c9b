// The CLI as a user runs it: child processes, exit codes, one-line errors, --help, --json.
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { Session } from "../../src/index.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
const db = tmp.path("demo.db");
after(() => tmp.remove());

/** Asserts a failure: the exit code, nothing on stdout, exactly one line on stderr matching `pattern`. */
function assertOneLineError(
  result: { code: number | null; stdout: string; stderr: string },
  code: number,
  pattern: RegExp,
) {
  assert.equal(result.code, code, `exit code (stderr: ${result.stderr})`);
  assert.equal(result.stdout, "");
  const lines = result.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line: ${result.stderr}`);
  assert.match(lines[0]!, /^agent-session: /);
  assert.match(lines[0]!, pattern);
}

const COMMANDS = [
  "demo",
  "ls",
  "show",
  "tree",
  "search",
  "blocks",
  "stats",
  "export",
  "import",
  "adopt",
  "prune",
  "purge",
  "rekey",
  "embed",
  "serve",
  "mcp",
];

describe("agent-session CLI", { concurrency: true }, () => {
  before(async () => {
    const result = await runCli(["demo", "--db", db]);
    assert.equal(result.code, 0, result.stderr);
  });

  test("--help lists every command, and every command has its own --help", async () => {
    const program = await runCli(["--help"]);
    assert.equal(program.code, 0);
    for (const name of COMMANDS) assert.match(program.stdout, new RegExp(`^  ${name} `, "m"));
    const helps = await Promise.all(COMMANDS.map((name) => runCli([name, "--help"])));
    helps.forEach((help, i) => {
      assert.equal(help.code, 0, COMMANDS[i]);
      assert.match(help.stdout, new RegExp(`^Usage: agent-session ${COMMANDS[i]}`), COMMANDS[i]);
      assert.match(help.stdout, /--db <path\|url>/);
      assert.match(help.stdout, /Examples:/);
    });
    assert.deepEqual((await runCli(["help", "prune"])).stdout, helps[COMMANDS.indexOf("prune")]!.stdout);
    const version = await runCli(["--version"]);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });

  test("bad arguments: exit code 2 and one line that points at the help", async () => {
    const cases: [string[], RegExp][] = [
      [["frobnicate"], /unknown command "frobnicate" \(see/],
      [["serach", "x"], /unknown command "serach" \(did you mean "search"\?\)/],
      [["help", "exprot"], /unknown command "exprot" \(did you mean "export"\?\)/],
      [["ls", "--bogus"], /unknown option --bogus \(see 'agent-session ls --help'\)/],
      [["show"], /show needs <session>/],
      [["ls", "extra"], /unexpected argument "extra"/],
      [["search", "x", "--branch", "sideways"], /--branch must be "active" or "all"/],
      [["search", "x", "--since", "yesterday"], /--since must be an ISO-8601 time .*"yesterday"/],
      [["search", "x", "--until", "2026-13-45"], /--until must be an ISO-8601 time/],
      [["prune"], /prune needs --older-than/],
      [["prune", "--older-than", "soon"], /--older-than must look like 30d/],
      [["serve", "--port", "http"], /--port must be a whole number/],
      [["ls", "--limit", "-3"], /--limit/],
      [["ls", "--json=yes"], /--json does not take a value/],
      [["ls", "--db", "--limit"], /option --db needs a value/],
      [["ls", "--db"], /option --db needs a value/],
    ];
    const results = await Promise.all(
      cases.map(([args]) => runCli(args.includes("--db") ? args : [...args, "--db", db])),
    );
    results.forEach((result, i) => {
      assertOneLineError(result, 2, cases[i]![1]);
    });
    const json = await runCli(["ls", "--bogus", "--json", "--db", db]);
    assert.equal(json.code, 2);
    assert.deepEqual(JSON.parse(json.stderr), {
      error: { code: "USAGE", message: "unknown option --bogus (see 'agent-session ls --help')" },
    });
    const bare = await runCli([]);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /Usage: agent-session <command>/);
  });

  test("a missing or wrong database is one clear line and exit code 1, and nothing is created", async () => {
    const missing = tmp.path("nowhere.db");
    assertOneLineError(await runCli(["ls", "--db", missing]), 1, /no database at .*nowhere\.db/);
    assert.equal(existsSync(missing), false);
    const cwd = tempDir();
    try {
      assertOneLineError(
        await runCli(["stats"], { cwd: cwd.dir }),
        1,
        /no database at \.\/agent-session\.db/,
      );
      assert.equal(existsSync(cwd.path("agent-session.db")), false);
    } finally {
      cwd.remove();
    }
    const text = tmp.path("notes.txt");
    writeFileSync(text, "hello, not a database");
    assertOneLineError(await runCli(["ls", "--db", text]), 1, /is not a SQLite database/);
    const pg = await runCli(["ls", "--db", "postgres://someone:s3cret@127.0.0.1:1/none"]);
    assertOneLineError(pg, 1, /cannot open Postgres at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/none/);
    assert.doesNotMatch(pg.stderr, /s3cret/);
  });

  test("unknown sessions and messages are NOT_FOUND, as text and as JSON", async () => {
    assertOneLineError(await runCli(["show", "nope", "--db", db]), 1, /session "nope" not found/);
    assertOneLineError(
      await runCli(["show", "demo-deploy", "--leaf", "zz", "--db", db]),
      1,
      /message "zz" is not in session/,
    );
    const json = await runCli(["tree", "nope", "--json", "--db", db]);
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.stderr).error.code, "NOT_FOUND");
  });

  test("demo is idempotent: a second run writes nothing", async () => {
    const again = await runCli(["demo", "--db", db], { source: true });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already in .*nothing was written/);
    const sessions = parseJson<{ id: string; messages: number }[]>(
      await runCli(["ls", "--json", "--db", db]),
    );
    assert.deepEqual(
      sessions.map((s) => [s.id, s.messages]),
      [
        ["demo-retro", 2],
        ["demo-trip", 6],
        ["demo-deploy", 11],
        ["demo-scratch", 2],
      ],
    );
  });

  test("ls shows registered sessions newest first, then unregistered ones", async () => {
    const result = await runCli(["ls", "--db", db]);
    assert.equal(result.code, 0);
    const lines = result.stdout.trimEnd().split("\n");
    assert.match(lines[0]!, /^ID\s+NAME\s+MESSAGES/);
    assert.match(lines[3]!, /^demo-deploy\s+Deploy planning\s+11\s/);
    assert.match(lines[4]!, /^demo-scratch\s+\(unregistered\)\s+2/);
  });

  test("demo ends with next commands that run in a checkout (npm run cli --, not an agent-session on PATH)", async () => {
    const again = await runCli(["demo", "--db", db], { source: true });
    assert.match(
      again.stdout,
      /^Next \(with the same --db\): npm run cli -- ls · npm run cli -- tree demo-deploy/m,
    );
  });

  test("ls shows the session of a Session made without forSession as (default session)", async () => {
    const file = tmp.path("default.db");
    const session = Session.create(file);
    await session.appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] });
    await session.close();
    const lines = (await runCli(["ls", "--db", file])).stdout.trimEnd().split("\n");
    assert.match(lines[1]!, /^\(default session\)\s+\(unregistered\)\s+1\s/);
    assert.equal(parseJson<{ id: string }[]>(await runCli(["ls", "--json", "--db", file]))[0]?.id, "");
  });

  test("show: the branch as the model reads it, overlays expanded in JSON; --leaf and --raw", async () => {
    const view = parseJson<{
      leafId: string;
      entries: { id: string; overlay: { covered: { id: string }[] } | null }[];
    }>(await runCli(["show", "demo-deploy", "--json", "--db", db]));
    assert.equal(view.leafId, "a4");
    assert.deepEqual(
      view.entries.slice(1).map((e) => e.id),
      ["u3", "a3b", "u4", "a4"],
    );
    assert.deepEqual(
      view.entries[0]!.overlay!.covered.map((e) => e.id),
      ["u1", "a1", "u2", "a2"],
    );
    const text = await runCli(["show", "demo-deploy", "--leaf", "a3", "--db", db]);
    assert.match(text.stdout, /overlay .* replaces u1 … a2 \(4 stored messages/);
    assert.match(text.stdout, /assistant a3\n {2}Friday afternoon works/);
    assert.doesNotMatch(text.stdout, /Thursday it is/);
    const raw = await runCli(["show", "demo-deploy", "--leaf", "a3", "--raw", "--db", db]);
    assert.match(raw.stdout, /user u1\n {2}We need to ship/);
    assert.doesNotMatch(raw.stdout, /replaces/);
    const tool = await runCli(["show", "demo-deploy", "--db", db]);
    assert.match(
      tool.stdout,
      /\[tool create_reminder \(output-available\)\] \{"title":"Book the deploy window"/,
    );
  });

  test("tree draws the branches and marks the active path", async () => {
    const result = await runCli(["tree", "demo-deploy", "--db", db]);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^● u1 user: .*\[overlay [0-9a-f]{8} → a2\]$/m);
    assert.match(result.stdout, /^├─ ○ a3 assistant: Friday afternoon.*\(leaf\)$/m);
    assert.match(result.stdout, /^└─ ● a3b assistant:/m);
    assert.match(result.stdout, /^ {3}└─ ● u4 user:/m);
    assert.match(result.stdout, /^ {6}● a4 assistant: .*◀ latest leaf$/m);
    assert.match(result.stdout, /11 messages, 3 branches, latest leaf a4/);
    const json = parseJson<{ leaves: string[]; nodes: { id: string; onActivePath: boolean }[] }>(
      await runCli(["tree", "demo-deploy", "--json", "--db", db]),
    );
    assert.deepEqual(json.leaves, ["a3", "a4e", "a4"]);
    assert.equal(json.nodes.find((n) => n.id === "a3")?.onActivePath, false);
  });

  test("search across sessions, within one, on active paths only", async () => {
    const all = parseJson<{ sessionId: string; id: string }[]>(
      await runCli(["search", "thursday", "--json", "--db", db]),
    );
    assert.deepEqual(new Set(all.map((h) => h.sessionId)), new Set(["demo-deploy", "demo-retro"]));
    const active = parseJson<{ id: string; onActivePath: boolean }[]>(
      await runCli([
        "search",
        "thursday",
        "--session",
        "demo-deploy",
        "--branch",
        "active",
        "--json",
        "--db",
        db,
      ]),
    );
    assert.ok(active.length > 0 && active.every((h) => h.onActivePath));
    assert.ok(!active.some((h) => h.id === "u4e"), "the edited question is on another branch");
    assert.match((await runCli(["search", "xylophone", "--db", db])).stdout, /No matches/);
  });

  test("search: a question as written, --match all, filters and context", async () => {
    const asked = parseJson<{ id: string; score: number }[]>(
      await runCli(["search", "What happens on Thursday?", "--json", "--db", db]),
    );
    assert.ok(asked.length > 0 && asked.every((h) => h.score > 0));
    const strict = parseJson<unknown[]>(
      await runCli(["search", "What happens on Thursday?", "--match", "all", "--json", "--db", db]),
    );
    assert.deepEqual(strict, []);
    const users = parseJson<{ role: string }[]>(
      await runCli(["search", "thursday", "--role", "user", "--json", "--db", db]),
    );
    assert.ok(users.every((h) => h.role === "user"));
    const shown = (await runCli(["search", "thursday", "--context", "1", "--limit", "2", "--db", db])).stdout;
    assert.match(shown, /^ {2}> /m);
    assert.equal(shown.match(/^SESSION /gm)?.length, 1, "one header above every hit and its context");
    assert.equal(shown.match(/^ {2}> /gm)?.length, 2);
    const usage = await runCli(["search", "x", "--match", "some", "--db", db]);
    assert.match(usage.stderr, /--match must be "any" or "all"/);
  });

  test("blocks and stats", async () => {
    const blocks = parseJson<{ blocks: { label: string; content: string }[]; prompt: { content: string } }>(
      await runCli(["blocks", "demo-deploy", "--json", "--db", db]),
    );
    assert.deepEqual(
      blocks.blocks.map((b) => b.label),
      ["memory"],
    );
    assert.match(blocks.blocks[0]!.content, /Thursdays/);
    assert.match(blocks.prompt.content, /SOUL \[readonly\][\s\S]*MEMORY \(Facts learned about the user\)/);
    const stats = parseJson<{
      sessions: { total: number };
      messages: number;
      usage: { inputTokens: number };
      blocks: number;
    }>(await runCli(["stats", "--json", "--db", db]));
    assert.equal(stats.sessions.total, 4);
    assert.equal(stats.messages, 21);
    assert.equal(stats.usage.inputTokens, 4210 + 1830 + 640);
    assert.equal(stats.blocks, 5);
    assert.match(
      (await runCli(["stats", "--db", db])).stdout,
      /^sessions\s+4 \(3 registered, 1 unregistered\)$/m,
    );
  });

  test("a forced progress bar goes to stderr and leaves the data alone", async () => {
    const file = tmp.path("progress.jsonl");
    const result = await runCli(["export", "--progress", "-o", file, "--db", db]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /export \[.*\] 100% \| 21\/21 messages/);
    assert.match(result.stdout, /Exported 4 sessions, 21 messages/);
    const quiet = await runCli(["export", "--db", db]);
    assert.doesNotMatch(quiet.stderr, /\[/, "no bar when stderr is not a terminal");
  });
});
