// `agent-session rekey` in a child process: it resumes a rotation the library started and stopped, finishes it
// (the new key alone then reads everything), has nothing to do a second time, refuses a wrong old key before
// writing, and takes keys from files only.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { PassThrough } from "node:stream";
import { after, test } from "node:test";
import { run } from "../../src/cli/run.js";
import { SessionManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { msg } from "../../src/testing/contract/harness.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());

const aliceKeyring = (key: Uint8Array, previous: Uint8Array[] = []): Keyring => ({
  key: (owner) => (owner === "alice" ? key : undefined),
  previousKeys: (owner) => (owner === "alice" ? previous : []),
});

test("agent-session rekey resumes and finishes a rotation, refuses a wrong old key, reads keys from files", async () => {
  const db = tmp.path("rekey.db");
  const [oldKey, newKey, wrong] = [0, 1, 2].map(() => crypto.getRandomValues(new Uint8Array(32))) as [
    Uint8Array,
    Uint8Array,
    Uint8Array,
  ];
  // The three forms a key file may take: hex, raw bytes, base64.
  const files = {
    old: tmp.path("old.key"),
    new: tmp.path("new.key"),
    wrong: tmp.path("wrong.key"),
    bad: tmp.path("bad.key"),
  };
  writeFileSync(files.old, `${Buffer.from(oldKey).toString("hex")}\n`);
  writeFileSync(files.new, newKey);
  writeFileSync(files.wrong, Buffer.from(wrong).toString("base64"));
  writeFileSync(files.bad, "not a key\n");

  const store = new SqliteStore(db, { keyring: aliceKeyring(oldKey) });
  const manager = SessionManager.create(store);
  const { id } = await manager.create("chat", { owner: "alice" });
  for (let i = 0; i < 12; i++) await manager.append(id, msg(`m${i}`, `message ${i}`));
  await store.close();
  // The library starts the rotation and is stopped after its first batch of 5.
  const first = new SqliteStore(db, { keyring: aliceKeyring(newKey, [oldKey]) });
  const stop = new AbortController();
  await assert.rejects(
    first.rekey("alice", { batchSize: 5, signal: stop.signal, onProgress: () => stop.abort() }),
    {
      name: "AbortError",
    },
  );
  await first.close();

  const keys = (old: string) => ["--old-key-file", old, "--new-key-file", files.new];
  const refused = await runCli(["rekey", "--db", db, "--owner", "alice", ...keys(files.wrong), "--json"]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.equal(JSON.parse(refused.stderr).error.code, "DECRYPT_FAILED");
  const bad = await runCli(["rekey", "--db", db, "--owner", "alice", ...keys(files.bad)]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /does not hold a 32-byte key/);
  const inline = await runCli(["rekey", "--db", db, "--owner", "alice", "--new-key", "00"]);
  assert.equal(inline.code, 2, "a key is never taken from the command line");

  const done = await runCli([
    "rekey",
    "--db",
    db,
    "--owner",
    "alice",
    ...keys(files.old),
    "--batch-size",
    "3",
    "--json",
  ]);
  assert.equal(done.code, 0, done.stderr);
  const report = parseJson<{ total: number; resealed: number; resumed: boolean; keyId: string }>(done);
  assert.deepEqual([report.total, report.resealed, report.resumed], [12, 7, true]);
  assert.match(report.keyId, /^[0-9a-f]{16}$/);
  const again = await runCli(["rekey", "--db", db, "--owner", "alice", ...keys(files.old)]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(
    again.stdout,
    /^Re-sealed 0 messages of owner "alice" under key [0-9a-f]{16}; all 12 messages/,
  );

  const reopened = new SqliteStore(db, { keyring: aliceKeyring(newKey) });
  assert.equal((await reopened.session(id).getHistory()).length, 12);
  await reopened.close();
});

/** Runs the CLI in this process; `stopped` resolves when the command is asked to stop (Ctrl-C). */
async function runHere(argv: string[], stopped: () => Promise<void>) {
  const [stdout, stderr] = [new PassThrough(), new PassThrough()];
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => (out += chunk));
  stderr.on("data", (chunk: Buffer) => (err += chunk));
  const io = { stdout, stderr, stdin: new PassThrough(), env: {}, stderrIsTTY: false };
  const code = await run(argv, io, stopped);
  return { code, stdout: out, stderr: err };
}

test("agent-session rekey stopped (Ctrl-C) ends after the batch under way with exit 130; run again, it resumes", async () => {
  const db = tmp.path("interrupt.db");
  const [oldKey, newKey] = [0, 1].map(() => crypto.getRandomValues(new Uint8Array(32))) as [
    Uint8Array,
    Uint8Array,
  ];
  const store = new SqliteStore(db, { keyring: aliceKeyring(oldKey) });
  const manager = SessionManager.create(store);
  const { id } = await manager.create("chat", { owner: "alice" });
  for (let i = 0; i < 9; i++) await manager.append(id, msg(`m${i}`, `message ${i}`));
  await store.close();
  writeFileSync(tmp.path("i-old.key"), oldKey);
  writeFileSync(tmp.path("i-new.key"), newKey);
  const argv = ["rekey", "--db", db, "--owner", "alice", "--batch-size", "4"];
  argv.push("--old-key-file", tmp.path("i-old.key"), "--new-key-file", tmp.path("i-new.key"));
  // Asked to stop at once: the first batch (a synchronous transaction) completes, then it stops.
  const stopped = await runHere(argv, () => Promise.resolve());
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.match(stopped.stderr, /interrupted after 4 of 9 messages: .* run the same command again to resume/);
  const resumed = await runHere([...argv, "--json"], () => new Promise<void>(() => {}));
  assert.equal(resumed.code, 0, resumed.stderr);
  const report = JSON.parse(resumed.stdout) as { resealed: number; resumed: boolean };
  assert.deepEqual([report.resealed, report.resumed], [5, true]);
  const reopened = new SqliteStore(db, { keyring: aliceKeyring(newKey) });
  assert.equal((await reopened.session(id).getHistory()).length, 9);
  await reopened.close();
});

test("agent-session rekey --seal-clear seals an owner's history from before it had a key, with its key file alone", async () => {
  const db = tmp.path("seal-clear.db");
  const key = crypto.getRandomValues(new Uint8Array(32));
  const plain = new SqliteStore(db);
  const manager = SessionManager.create(plain);
  const { id } = await manager.create("chat", { owner: "alice" });
  for (let i = 0; i < 5; i++) await manager.append(id, msg(`m${i}`, `zqxclicleartextq ${i}`));
  await plain.close();
  writeFileSync(tmp.path("alice.key"), key);
  const argv = ["rekey", "--db", db, "--owner", "alice", "--new-key-file", tmp.path("alice.key")];
  const without = await runCli(argv);
  assert.equal(without.code, 2, "without --seal-clear the old key file is required");
  const sealed = await runCli([...argv, "--seal-clear", "--batch-size", "2"]);
  assert.equal(sealed.code, 0, sealed.stderr);
  assert.match(sealed.stdout, /^Sealed 5 messages of owner "alice" under key [0-9a-f]{16}; all 5 messages/);
  assert.match(sealed.stdout, /agent-session purge/);
  const keyless = new SqliteStore(db);
  await assert.rejects(keyless.searchMessages("zqxclicleartextq", { owner: "alice" }), {
    code: "DECRYPT_FAILED",
  });
  await keyless.close();
  const reopened = new SqliteStore(db, { keyring: aliceKeyring(key) });
  assert.equal((await reopened.searchMessages("zqxclicleartextq", { owner: "alice" })).length, 5);
  await reopened.close();
});
