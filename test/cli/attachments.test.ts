// Media payloads through the CLI: each payload once in a JSONL file, byte-identical SQLite → JSONL → Postgres →
// JSONL, `stats` counting attachment bytes once, and `prune` releasing a pruned session's payloads.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, test } from "node:test";
import type { SessionMessage } from "../../src/contract/message.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { postgresUnavailable, withSchemaUrl } from "../fixtures/postgres-db.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());
const skipPostgres = await postgresUnavailable();

const image = Buffer.alloc(50_000, 9).toString("base64");
const withImage = (id: string): SessionMessage =>
  ({
    id,
    role: "user",
    parts: [
      { type: "text", text: `see ${id}` },
      { type: "file", mediaType: "image/png", url: `data:image/png;base64,${image}` },
    ],
  }) as unknown as SessionMessage;

const otherImage = Buffer.alloc(50_000, 3).toString("base64");
const other = (id: string): SessionMessage =>
  ({
    id,
    role: "user",
    parts: [{ type: "file", mediaType: "image/png", url: `data:image/png;base64,${otherImage}` }],
  }) as unknown as SessionMessage;

async function seed(file: string): Promise<void> {
  const store = new SqliteStore(file);
  await store.session("one").appendMessage(withImage("m1"));
  await store.session("one").appendMessage(withImage("m2"));
  await store.session("two").appendMessage(withImage("m1"));
  await store.close();
}

test("an export carries a shared payload once; stats counts its bytes once", async () => {
  const db = tmp.path("media.db");
  await seed(db);
  const out = tmp.path("media.jsonl");
  assert.equal((await runCli(["export", "-o", out, "--db", db])).code, 0);
  const records = readFileSync(out, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string });
  assert.deepEqual(
    records.map((r) => r.type),
    ["header", "session", "attachment", "message", "message", "session", "message", "end"],
  );
  const stats = parseJson<{ attachments: { count: number; bytes: number } }>(
    await runCli(["stats", "--json", "--db", db]),
  );
  assert.deepEqual(stats.attachments, { count: 1, bytes: 50_000 });
  assert.match((await runCli(["stats", "--db", db])).stdout, /attachments .*1 media payloads/);
});

/** An export as a tool that knows nothing of attachments would write it: each payload inline in its message. */
function inlined(exported: string): string {
  const payloads = new Map<string, string>();
  const out: string[] = [];
  for (const line of exported.trimEnd().split("\n")) {
    const record = JSON.parse(line) as { type: string; hash?: string; data?: string };
    if (record.type === "attachment") payloads.set(record.hash!, record.data!);
    else
      out.push(
        line.replace(
          /"attachment:sha256:([0-9a-f]{64});\d+;(data:[^,"]*,)"/g,
          (_, hash: string, header: string) => JSON.stringify(header + payloads.get(hash)!),
        ),
      );
  }
  return `${out.join("\n")}\n`;
}

test("a file with inline media imports offloaded: its export is what appending wrote; a bad file writes nothing", async () => {
  const db = tmp.path("media-inline-src.db");
  await seed(db);
  const first = await runCli(["export", "--db", db]);
  assert.equal(first.code, 0, first.stderr);
  const inline = inlined(first.stdout);
  assert.ok(!inline.includes("attachment"), "no attachment record or pointer is left");
  assert.ok(inline.includes(image), "the payload is inline");

  const copy = tmp.path("media-inline.db");
  const imported = await runCli(["import", "-", "--db", copy], { input: inline });
  assert.equal(imported.code, 0, imported.stderr);
  assert.equal((await runCli(["export", "--db", copy])).stdout, first.stdout);
  const stats = async (file: string) =>
    parseJson<{ messages: number; attachments: { count: number; bytes: number } }>(
      await runCli(["stats", "--json", "--db", file]),
    );
  assert.deepEqual((await stats(copy)).attachments, { count: 1, bytes: 50_000 });

  // The check pass still refuses a damaged file before anything is written: no row and no payload.
  const target = tmp.path("media-inline-refused.db");
  const store = new SqliteStore(target);
  await store
    .session("kept")
    .appendMessage({ id: "k1", role: "user", parts: [{ type: "text", text: "hi" }] });
  await store.close();
  const before = await stats(target);
  const cut = inline.trimEnd().split("\n").slice(0, -1).join("\n");
  const refused = await runCli(["import", "-", "--db", target], { input: `${cut}\n` });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /cut short/);
  assert.deepEqual(await stats(target), before);
});

test("SQLite → JSONL → Postgres → JSONL is byte-identical with media", {
  skip: skipPostgres ?? false,
}, async () => {
  const db = tmp.path("media-pg.db");
  await seed(db);
  const first = await runCli(["export", "--db", db]);
  assert.equal(first.code, 0, first.stderr);
  await withSchemaUrl(`agent_session_cli_media_${process.pid}`, async (url) => {
    const imported = await runCli(["import", "-", "--db", url], { input: first.stdout });
    assert.equal(imported.code, 0, imported.stderr);
    const back = await runCli(["export", "--db", url]);
    assert.equal(back.stdout, first.stdout);
    const copy = tmp.path("media-back.db");
    assert.equal((await runCli(["import", "-", "--db", copy], { input: back.stdout })).code, 0);
    assert.equal((await runCli(["export", "--db", copy])).stdout, first.stdout);
  });
});

test("prune releases a pruned session's payloads, keeping one another session still points at", async () => {
  const db = tmp.path("media-prune-src.db");
  const store = new SqliteStore(db);
  for (const id of ["one", "two"]) await store.registry.create({ id, name: id });
  await store.session("one").appendMessage(withImage("m1"));
  await store.session("one").appendMessage(other("m2"));
  await store.session("two").appendMessage(withImage("m1"));
  await store.close();
  const exported = await runCli(["export", "--db", db]);
  assert.equal(exported.code, 0, exported.stderr);
  // The same data with the given sessions' last activity moved back to 2020 (prune goes by activity).
  const aged = (ids: string[]) =>
    exported.stdout
      .split("\n")
      .map((line) =>
        ids.some((id) => line.startsWith(`{"type":"session","id":"${id}"`))
          ? line.replace(/"updatedAt":"[^"]+"/, '"updatedAt":"2020-01-01T00:00:00.000Z"')
          : line,
      )
      .join("\n");
  const attachments = async (file: string) =>
    parseJson<{ attachments: { count: number; bytes: number } }>(
      await runCli(["stats", "--json", "--db", file]),
    ).attachments;

  const some = tmp.path("media-prune-one.db");
  assert.equal((await runCli(["import", "-", "--db", some], { input: aged(["one"]) })).code, 0);
  assert.deepEqual(await attachments(some), { count: 2, bytes: 100_000 });
  const pruned = await runCli(["prune", "--older-than", "30d", "--json", "--db", some]);
  assert.equal(parseJson<{ deleted: number }>(pruned).deleted, 1);
  assert.deepEqual(await attachments(some), { count: 1, bytes: 50_000 }, "the shared image stays");
  const left = new SqliteStore(some);
  assert.equal(JSON.stringify(await left.session("two").getMessage("m1")), JSON.stringify(withImage("m1")));
  await left.close();

  const all = tmp.path("media-prune-all.db");
  assert.equal((await runCli(["import", "-", "--db", all], { input: aged(["one", "two"]) })).code, 0);
  await runCli(["prune", "--older-than", "30d", "--db", all]);
  assert.deepEqual(await attachments(all), { count: 0, bytes: 0 }, "nothing leaked");
});
