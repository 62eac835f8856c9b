// Export and import through the CLI: byte-identical round trips (SQLite, and through Postgres both ways),
// idempotent imports, partial exports, damaged files, and prune on imported history.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { hasSessionRegistry } from "../../src/contract/registry.js";
import { hasTransfer } from "../../src/contract/transfer.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { PG_URL, postgresUnavailable, withSchemaUrl } from "../fixtures/postgres-db.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
const source = tmp.path("source.db");
const exported = tmp.path("export.jsonl");
after(() => tmp.remove());

const PG_SCHEMA = `agent_session_cli_${process.pid}`;

// Decided before any test is registered (see transfer-store.test.ts for why).
async function postgresSkipReason(): Promise<string | null> {
  const unavailable = await postgresUnavailable();
  if (unavailable) return unavailable;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const schema = `${PG_SCHEMA}_probe`;
    const store = await PostgresStore.open(client, { schema });
    const missing = [
      hasSessionRegistry(store) ? "" : "store.registry",
      hasTransfer(store) ? "" : "store.transfer",
    ];
    await store.close();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    const lacks = missing.filter(Boolean);
    return lacks.length > 0 ? `PostgresStore has no ${lacks.join(" or ")} yet` : null;
  } finally {
    await client.end();
  }
}
const skipPostgres = await postgresSkipReason();
if (skipPostgres) console.log(`Skipping the round trips through Postgres: ${skipPostgres}`);

function lines(file: string): string[] {
  return readFileSync(file, "utf8").trimEnd().split("\n");
}

describe("export and import", { concurrency: true }, () => {
  before(async () => {
    assert.equal((await runCli(["demo", "--db", source])).code, 0);
    const result = await runCli(["export", "-o", exported, "--db", source]);
    assert.equal(result.code, 0, result.stderr);
  });

  test("the file: a versioned header, sessions with their records, blocks, an end record with counts", () => {
    const records = lines(exported).map((line) => JSON.parse(line) as { type: string });
    assert.deepEqual(records[0], { type: "header", format: "agent-session-export", version: 4 });
    assert.deepEqual(records.at(-1), {
      type: "end",
      sessions: 4,
      messages: 21,
      compactions: 1,
      blocks: 5,
      entries: 0,
      facts: 0,
      checkpoints: 0,
      items: 0,
    });
    const first = records[1] as {
      type: string;
      id: string;
      leaf: string;
      registry: { usage: { inputTokens: number } };
    };
    assert.equal(first.type, "session");
    assert.equal(first.id, "demo-deploy", "oldest activity first");
    assert.equal(first.leaf, "a4");
    assert.equal(first.registry.usage.inputTokens, 4210);
    const message = records[2] as Record<string, unknown>;
    assert.deepEqual(Object.keys(message), [
      "type",
      "session",
      "id",
      "parent",
      "role",
      "createdAt",
      "message",
    ]);
  });

  test("SQLite → JSONL → SQLite → JSONL is byte-identical, and a second import adds nothing", async () => {
    const copy = tmp.path("copy.db");
    const first = await runCli(["import", exported, "--db", copy]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /4 sessions \(3 newly registered\), 21 messages \(0 already there\)/);
    const second = parseJson<{
      messages: { inserted: number; skipped: number };
      sessions: { registered: number };
    }>(await runCli(["import", exported, "--json", "--db", copy]));
    assert.deepEqual(second.messages, { inserted: 0, skipped: 21 });
    assert.equal(second.sessions.registered, 0);
    const again = await runCli(["export", "--db", copy]);
    assert.equal(again.stdout, readFileSync(exported, "utf8"));
    assert.deepEqual(
      parseJson(await runCli(["ls", "--json", "--db", copy])),
      parseJson(await runCli(["ls", "--json", "--db", source])),
    );
  });

  test("SQLite → JSONL → Postgres → JSONL is byte-identical", { skip: skipPostgres ?? false }, async () => {
    await withSchemaUrl(PG_SCHEMA, async (url) => {
      const imported = await runCli(["import", exported, "--db", url.toString()]);
      assert.equal(imported.code, 0, imported.stderr);
      const twice = parseJson<{ messages: { inserted: number } }>(
        await runCli(["import", exported, "--json", "--db", url.toString()]),
      );
      assert.equal(twice.messages.inserted, 0);
      const back = await runCli(["export", "--db", url.toString()]);
      assert.equal(back.code, 0, back.stderr);
      assert.equal(back.stdout, readFileSync(exported, "utf8"));
    });
  });

  test("Postgres → JSONL → SQLite → JSONL is byte-identical", { skip: skipPostgres ?? false }, async () => {
    // Written natively in Postgres (the demo through the library), so nothing of it came from SQLite.
    await withSchemaUrl(`${PG_SCHEMA}_native`, async (url) => {
      assert.equal((await runCli(["demo", "--db", url.toString()])).code, 0);
      const fromPostgres = await runCli(["export", "--db", url.toString()]);
      assert.equal(fromPostgres.code, 0, fromPostgres.stderr);
      const copy = tmp.path("from-postgres.db");
      const imported = await runCli(["import", "-", "--db", copy], { input: fromPostgres.stdout });
      assert.equal(imported.code, 0, imported.stderr);
      assert.equal((await runCli(["export", "--db", copy])).stdout, fromPostgres.stdout);
      assert.deepEqual(
        parseJson(await runCli(["ls", "--json", "--db", copy])),
        parseJson(await runCli(["ls", "--json", "--db", url.toString()])),
      );
    });
  });

  test("a partial export carries its sessions and their blocks only; stdin imports it", async () => {
    const partial = await runCli(["export", "demo-trip", "demo-scratch", "--db", source]);
    assert.equal(partial.code, 0, partial.stderr);
    const records = partial.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      records.filter((r) => r.type === "session").map((r) => r.id),
      ["demo-trip", "demo-scratch"],
    );
    assert.deepEqual(
      records.filter((r) => r.type === "block").map((r) => r.key),
      ["_system_prompt_demo-trip", "memory_demo-trip"],
    );
    const target = tmp.path("partial.db");
    const result = await runCli(["import", "-", "--json", "--db", target], { input: partial.stdout });
    assert.equal(result.code, 0, result.stderr);
    const listed = parseJson<{ id: string }[]>(await runCli(["ls", "--json", "--db", target]));
    assert.deepEqual(
      listed.map((s) => s.id),
      ["demo-trip", "demo-scratch"],
    );
    const unknown = await runCli(["export", "demo-trip", "nope", "--db", source]);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stdout, "", "nothing is written before every session is known");
  });

  test("damaged files fail with the line and a non-zero exit; a wrong file creates no database", async () => {
    const all = lines(exported);
    const write = (name: string, content: string[]) => {
      const file = tmp.path(name);
      writeFileSync(file, `${content.join("\n")}\n`);
      return file;
    };
    const cases: [string, string[], RegExp][] = [
      ["cut.jsonl", all.slice(0, -1), /ends without its end record: it was cut short/],
      ["newer.jsonl", [all[0]!.replace('"version":4', '"version":5'), ...all.slice(1)], /version 5 is newer/],
      [
        "counts.jsonl",
        [...all.slice(0, -1), all.at(-1)!.replace('"messages":21', '"messages":22')],
        /promises 22 messages/,
      ],
      [
        "time.jsonl",
        [all[0]!, all[1]!, all[2]!.replace(/"createdAt":"[^"]+"/, '"createdAt":"yesterday"')],
        /line 3: "createdAt" must be an ISO-8601/,
      ],
      ["orphan.jsonl", [all[0]!, all[2]!], /line 2: message of session "demo-deploy" is not inside/],
      ["garbage.jsonl", [all[0]!, "{not json"], /line 2: not a JSON object/],
    ];
    for (const [name, content, pattern] of cases) {
      const result = await runCli(["import", write(name, content), "--db", tmp.path(`${name}.db`)]);
      assert.equal(result.code, 1, name);
      assert.match(result.stderr.trim(), pattern, name);
      assert.equal(result.stderr.trim().split("\n").length, 1, name);
    }
    const foreign = await runCli([
      "import",
      write("foreign.jsonl", ['{"hello":"world"}']),
      "--db",
      tmp.path("foreign.db"),
    ]);
    assert.equal(foreign.code, 1);
    assert.match(foreign.stderr, /not an agent-session export/);
    assert.equal(existsSync(tmp.path("foreign.db")), false);
    const missing = await runCli(["import", tmp.path("missing.jsonl"), "--db", tmp.path("missing.db")]);
    assert.match(missing.stderr, /no file at/);
  });

  test("prune deletes whole sessions by last activity (dry run first), then vacuums", async () => {
    // History with a stale session: the same export, with demo-deploy's last activity moved back to 2020.
    const aged = lines(exported).map((line) =>
      line.startsWith('{"type":"session","id":"demo-deploy"')
        ? line.replace(/"updatedAt":"[^"]+"/, '"updatedAt":"2020-01-01T00:00:00.000Z"')
        : line,
    );
    const file = tmp.path("aged.jsonl");
    writeFileSync(file, `${aged.join("\n")}\n`);
    const db = tmp.path("aged.db");
    assert.equal((await runCli(["import", file, "--db", db])).code, 0);
    const dry = await runCli(["prune", "--older-than", "30d", "--dry-run", "--db", db]);
    assert.match(dry.stdout, /Would erase 1 session inactive since/);
    assert.match(dry.stdout, /demo-deploy\s+Deploy planning\s+2020-01-01 00:00:00/);
    assert.equal(parseJson<unknown[]>(await runCli(["ls", "--json", "--db", db])).length, 4);
    const pruned = parseJson<{
      deleted: number;
      reclaim: { method: string; bytesBefore: number; bytesAfter: number };
    }>(await runCli(["prune", "--older-than", "30d", "--json", "--db", db]));
    assert.equal(pruned.deleted, 1);
    assert.equal(pruned.reclaim.method, "VACUUM");
    assert.ok(pruned.reclaim.bytesAfter <= pruned.reclaim.bytesBefore);
    const left = parseJson<{ id: string }[]>(await runCli(["ls", "--json", "--db", db]));
    assert.deepEqual(left.map((s) => s.id).sort(), ["demo-retro", "demo-scratch", "demo-trip"]);
    const stats = parseJson<{ blocks: number; messages: number }>(
      await runCli(["stats", "--json", "--db", db]),
    );
    assert.equal(stats.blocks, 3, "the pruned session's memory block and prompt are gone");
    assert.equal(stats.messages, 10);
    assert.match((await runCli(["search", "invoices", "--db", db])).stdout, /No matches/);
    assert.match(
      (await runCli(["prune", "--older-than", "30d", "--db", db])).stdout,
      /No session to prune: none unpinned has been inactive/,
    );
  });
});
