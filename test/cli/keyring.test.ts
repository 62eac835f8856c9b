// The CLI, the viewer and the MCP server hold the app's keyring: `--keyring <module>` or `--master-key-file
// <file>` opens an encrypted owner's data on SQLite and Postgres, and without one they say plainly that the store
// holds encrypted owners, instead of "No matches." (before, `search --owner` answered that on an encrypted store).
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import pg from "pg";
import { SAME_ORIGIN_HEADER } from "../../src/cli/serve/origin.js";
import { startViewer } from "../../src/cli/serve/server.js";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { deriveOwnerKey, masterKeyring } from "../../src/store/crypto/keyring.js";
import { dropSchema, PG_URL, postgresUnavailable } from "../fixtures/postgres-db.js";
import { call } from "../mcp/helpers.js";
import { cliArgs, runCli, tempDir } from "./helpers.js";

const skipPostgres = (await postgresUnavailable()) ?? false;
const SCHEMA = `cli_keyring_${process.pid}`;
const tmp = tempDir();
const db = tmp.path("sealed.db");
const master = new Uint8Array(32).fill(7);
const keyFile = tmp.path("master.key");
const wrongKeyFile = tmp.path("wrong.key");
const named = tmp.path("named-keyring.mjs");
const factory = tmp.path("factory-keyring.mjs");
const empty = tmp.path("no-keyring.mjs");
const NEEDED = /this store holds encrypted owners: pass --keyring or --master-key-file/;

const said = (id: string, text: string) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text }],
});

/** Alice's session `a1` is sealed under the master keyring; bob's `b1` too (every owner is keyed). */
async function seed(manager: SessionManager): Promise<void> {
  await manager.forOwner("alice").create("Alice", { id: "a1" });
  await manager.append("a1", said("a1-m", "deploy the payments service on friday"));
}

before(async () => {
  writeFileSync(keyFile, Buffer.from(master).toString("hex"));
  writeFileSync(wrongKeyFile, Buffer.from(new Uint8Array(32).fill(9)).toString("base64"));
  // Plain modules, as an app's would be (no import of the library: the CLI under test may be a bundle): alice's
  // key, derived as masterKeyring derives it.
  const alice = JSON.stringify([...deriveOwnerKey(master, "alice")]);
  const module = (name: string) =>
    `const alice = Uint8Array.from(${alice});\n` +
    `export ${name} ({ key: (owner) => (owner === "alice" ? alice : undefined) });\n`;
  writeFileSync(named, module("const keyring ="));
  writeFileSync(factory, module("default async () =>"));
  writeFileSync(empty, "export const nothing = 1;\n");
  const store = new SqliteStore(db, { keyring: masterKeyring(master) });
  await seed(new SessionManager(store));
  await store.close();
});
after(() => tmp.remove());

describe("CLI keyring (SQLite)", () => {
  test("without a keyring: search --owner and show say the store needs one; ls notes it", async () => {
    const search = await runCli(["search", "deploy", "--owner", "alice", "--db", db]);
    assert.equal(search.code, 1, search.stdout);
    assert.doesNotMatch(search.stdout, /No matches/);
    assert.match(search.stderr, NEEDED);
    const json = await runCli(["search", "deploy", "--owner", "alice", "--db", db, "--json"]);
    assert.equal(
      (JSON.parse(json.stderr.split("\n").at(-2)!) as { error: { code: string } }).error.code,
      "DECRYPT_FAILED",
    );
    const show = await runCli(["show", "a1", "--db", db]);
    assert.equal(show.code, 1);
    assert.match(show.stderr, NEEDED);
    const ls = await runCli(["ls", "--db", db]);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stderr, /note: this store holds encrypted owners/);
  });

  for (const [how, args] of [
    ["--master-key-file", ["--master-key-file", keyFile]],
    ["--keyring (named export)", ["--keyring", named]],
    ["--keyring (default factory)", ["--keyring", factory]],
  ] as const) {
    test(`with ${how}: search --owner finds, show reads, no note`, async () => {
      const search = await runCli(["search", "friday", "--owner", "alice", "--db", db, ...args]);
      assert.equal(search.code, 0, search.stderr);
      assert.match(search.stdout, /a1-m/);
      assert.equal(search.stderr, "");
      const show = await runCli(["show", "a1", "--db", db, ...args]);
      assert.equal(show.code, 0, show.stderr);
      assert.match(show.stdout, /payments service on friday/);
    });
  }

  test("a wrong key is named as such; bad options are refused", async () => {
    const wrong = await runCli(["show", "a1", "--db", db, "--master-key-file", wrongKeyFile]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /the keyring given does not hold the key/);
    const both = await runCli(["ls", "--db", db, "--keyring", named, "--master-key-file", keyFile]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /not both/);
    const none = await runCli(["ls", "--db", db, "--keyring", empty]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /must export a Keyring/);
    const rekey = await runCli(["rekey", "--db", db, "--owner", "alice", "--keyring", named]);
    assert.equal(rekey.code, 2);
    assert.match(rekey.stderr, /--old-key-file and --new-key-file only/);
  });

  test("learn: an encrypted owner's facts are learned sealed with her key, refused without it", async () => {
    const recorded = tmp.path("alice-facts.json");
    const text = "Alice deploys zqxclifactq on fridays.";
    writeFileSync(recorded, JSON.stringify([{ text, about: "alice", sources: ["a1-m"], sessionId: "a1" }]));
    const learn = ["learn", "--db", db, "--owner", "alice", "--recorded", recorded, "--json"];
    const refused = await runCli(learn);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /DECRYPT_FAILED/);
    const learned = await runCli([...learn, "--master-key-file", keyFile]);
    assert.equal(learned.code, 0, learned.stderr);
    assert.equal((JSON.parse(learned.stdout) as { added: number }).added, 1);
    const facts = await runCli(["facts", "--db", db, "--owner", "alice", "--master-key-file", keyFile]);
    assert.ok(facts.stdout.includes(text), facts.stdout);
    assert.equal(occurrencesIn(db, "zqxclifactq"), 0, "her fact is sealed in the file");
  });
});

describe("viewer keyring", () => {
  test("without a keyring, a sealed session's history is a 403 naming the options; with one it reads", async () => {
    for (const keyring of [undefined, masterKeyring(master)]) {
      const store = new SqliteStore(db, keyring ? { keyring } : {});
      const viewer = await startViewer(store, { port: 0 });
      try {
        const res = await fetch(`${viewer.url}api/history?id=a1`, { headers: { [SAME_ORIGIN_HEADER]: "1" } });
        const body = (await res.json()) as { error?: { code: string; message: string } };
        if (keyring) assert.equal(res.status, 200, JSON.stringify(body));
        else {
          assert.equal(res.status, 403);
          assert.equal(body.error?.code, "DECRYPT_FAILED");
          assert.match(
            body.error?.message ?? "",
            /restart agent-session serve with --keyring or --master-key-file/,
          );
        }
      } finally {
        await viewer.close();
        await store.close();
      }
    }
  });

  test("an encrypted owner's facts: shown opened with the keyring, refused with the keyring's message without it", async () => {
    const fact = {
      text: "Alice deploys on Friday.",
      observedAt: 1,
      producer: "p",
      sources: [{ sessionId: "a1", messageId: "a1-m" }],
    };
    for (const keyring of [masterKeyring(master), undefined]) {
      const store = new SqliteStore(db, keyring ? { keyring } : {});
      // Sealed with the keyring (docs/FACTS.md, Encryption); a store without it refuses the write.
      if (keyring) await store.facts.add({ owner: "alice" }, [{ ...fact, id: "f-friday" }]);
      else await assert.rejects(store.facts.add({ owner: "alice" }, [fact]), { code: "DECRYPT_FAILED" });
      const viewer = await startViewer(store, { port: 0 });
      try {
        for (const query of ["id=a1", "owner=alice", "id=a1&owner=alice"]) {
          const res = await fetch(`${viewer.url}api/facts?${query}`, {
            headers: { [SAME_ORIGIN_HEADER]: "1" },
          });
          const text = await res.text();
          if (keyring) {
            assert.equal(res.status, 200, text);
            const { facts } = JSON.parse(text) as { facts: { text: string }[] };
            // Opened: the fact this test stored is among alice's (an earlier test learned others).
            assert.ok(
              facts.some((f) => f.text === "Alice deploys on Friday."),
              text,
            );
          } else {
            assert.equal(res.status, 403, text);
            assert.match(text, /restart agent-session serve with --keyring or --master-key-file/);
            assert.doesNotMatch(text, /Friday/);
          }
        }
      } finally {
        await viewer.close();
        await store.close();
      }
    }
  });
});

describe("MCP server keyring", () => {
  test("mcp --owner of an encrypted owner without a keyring refuses to start, saying why", async () => {
    const refused = await runCli(["mcp", "--owner", "alice", "--db", db]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, NEEDED);
  });

  for (const [how, extra] of [
    [
      "with --master-key-file, an owner's search finds its sealed messages",
      ["--owner", "alice", "--master-key-file", keyFile],
    ],
    ["without a keyring, a sealed session reads as an Error naming the keyring", []],
  ] as const) {
    test(how, async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [...cliArgs(), "mcp", "--db", db, ...extra],
        stderr: "pipe",
      });
      const client = new Client({ name: "agent-session-test", version: "1.0.0" });
      await client.connect(transport);
      try {
        if (extra.length > 0) {
          const hits = await call(client, "search_memory", { query: "friday" });
          assert.equal(hits.isError, false, hits.text);
          assert.match(hits.text, /payments service on friday/);
        } else {
          const read = await call(client, "read_session", { session: "a1" });
          assert.equal(read.isError, true);
          assert.match(
            read.text,
            /^Error: this store holds encrypted owners and this server cannot open their data/,
          );
          assert.match(read.text, /--keyring <module> or --master-key-file <file>/);
        }
      } finally {
        await client.close();
      }
    });
  }
});

describe("CLI keyring (Postgres)", { skip: skipPostgres }, () => {
  const url = PG_URL;
  const where = ["--db", url, "--schema", SCHEMA];
  let client: pg.Client;
  before(async () => {
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await dropSchema(client, SCHEMA);
    const store = await PostgresStore.open(url, { schema: SCHEMA, keyring: masterKeyring(master) });
    await seed(new SessionManager(store));
    await store.close();
  });
  after(async () => {
    await dropSchema(client, SCHEMA);
    await client.end();
  });

  test("search --owner says the store needs a keyring without one, and finds with --master-key-file", async () => {
    const keyless = await runCli(["search", "deploy", "--owner", "alice", ...where]);
    assert.equal(keyless.code, 1, keyless.stdout);
    assert.match(keyless.stderr, NEEDED);
    const keyed = await runCli([
      "search",
      "friday",
      "--owner",
      "alice",
      ...where,
      "--master-key-file",
      keyFile,
    ]);
    assert.equal(keyed.code, 0, keyed.stderr);
    assert.match(keyed.stdout, /a1-m/);
    const show = await runCli(["show", "a1", ...where, "--keyring", named]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /payments service on friday/);
  });
});

// How many times `text` is in the SQLite file's bytes (its WAL included).
function occurrencesIn(path: string, text: string): number {
  return [path, `${path}-wal`]
    .filter((file) => existsSync(file))
    .reduce((n, file) => n + readFileSync(file).toString("latin1").split(text).length - 1, 0);
}
