// `agent-session rekey` on Postgres tables (--db postgres://… --schema …): it resumes a rotation the library
// started and stopped, finishes it (the new key alone then reads everything), and refuses a wrong old key before
// writing anything.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, test } from "node:test";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { msg } from "../../src/testing/contract/harness.js";
import { dropSchema, PG_URL, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());

const aliceKeyring = (key: Uint8Array, previous: Uint8Array[] = []): Keyring => ({
  key: (owner) => (owner === "alice" ? key : undefined),
  previousKeys: (owner) => (owner === "alice" ? previous : []),
});

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the Postgres rekey CLI test: ${unavailable}`);

test("agent-session rekey on Postgres resumes and finishes a rotation, refuses a wrong old key", {
  skip: unavailable ?? false,
}, async () => {
  const pool = testPool(2);
  const schema = `agent_session_cli_rekey_${process.pid}`;
  await dropSchema(pool, schema);
  try {
    const [oldKey, newKey, wrong] = [0, 1, 2].map(() => crypto.getRandomValues(new Uint8Array(32))) as [
      Uint8Array,
      Uint8Array,
      Uint8Array,
    ];
    const files = { old: tmp.path("old.key"), new: tmp.path("new.key"), wrong: tmp.path("wrong.key") };
    writeFileSync(files.old, oldKey);
    writeFileSync(files.new, newKey);
    writeFileSync(files.wrong, wrong);
    const store = await PostgresStore.open(pool, { schema, keyring: aliceKeyring(oldKey) });
    const { id } = await SessionManager.create(store).create("chat", { owner: "alice" });
    for (let i = 0; i < 12; i++) await store.session(id).appendMessage(msg(`m${i}`, `message ${i}`));
    await store.close();
    const first = await PostgresStore.open(pool, { schema, keyring: aliceKeyring(newKey, [oldKey]) });
    const stop = new AbortController();
    await assert.rejects(
      first.rekey("alice", { batchSize: 5, signal: stop.signal, onProgress: () => stop.abort() }),
      { name: "AbortError" },
    );
    await first.close();

    const argv = (old: string) => [
      "rekey",
      "--db",
      PG_URL,
      "--schema",
      schema,
      "--owner",
      "alice",
      "--old-key-file",
      old,
      "--new-key-file",
      files.new,
      "--json",
    ];
    const refused = await runCli(argv(files.wrong));
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(JSON.parse(refused.stderr).error.code, "DECRYPT_FAILED");
    const done = await runCli([...argv(files.old), "--batch-size", "3"]);
    assert.equal(done.code, 0, done.stderr);
    const report = parseJson<{ total: number; resealed: number; resumed: boolean }>(done);
    assert.deepEqual([report.total, report.resealed, report.resumed], [12, 7, true]);

    const reopened = await PostgresStore.open(pool, { schema, keyring: aliceKeyring(newKey) });
    assert.equal((await reopened.session(id).getHistory()).length, 12);
    await reopened.close();
  } finally {
    await dropSchema(pool, schema);
    await pool.end();
  }
});

test("agent-session rekey --seal-clear on Postgres seals an owner's history from before it had a key", {
  skip: unavailable ?? false,
}, async () => {
  const pool = testPool(2);
  const schema = `agent_session_cli_seal_${process.pid}`;
  await dropSchema(pool, schema);
  try {
    const key = crypto.getRandomValues(new Uint8Array(32));
    writeFileSync(tmp.path("seal.key"), key);
    const plain = await PostgresStore.open(pool, { schema });
    const { id } = await SessionManager.create(plain).create("chat", { owner: "alice" });
    for (let i = 0; i < 5; i++) await plain.session(id).appendMessage(msg(`m${i}`, `zqxpgclearq ${i}`));
    await plain.close();
    const done = await runCli([
      "rekey",
      "--db",
      PG_URL,
      "--schema",
      schema,
      "--owner",
      "alice",
      "--new-key-file",
      tmp.path("seal.key"),
      "--seal-clear",
      "--json",
    ]);
    assert.equal(done.code, 0, done.stderr);
    const report = parseJson<{ total: number; resealed: number; resumed: boolean }>(done);
    assert.deepEqual([report.total, report.resealed, report.resumed], [5, 5, false]);
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM "${schema}".agent_messages WHERE content LIKE '%zqxpgclearq%'
         OR search::text LIKE '%zqxpgclearq%'`,
    );
    assert.equal((rows[0] as { n: number }).n, 0, "no row holds the words, nor its search vector");
    const keyless = await PostgresStore.open(pool, { schema });
    await assert.rejects(keyless.searchMessages("zqxpgclearq", { owner: "alice" }), {
      code: "DECRYPT_FAILED",
    });
    await keyless.close();
    const reopened = await PostgresStore.open(pool, { schema, keyring: aliceKeyring(key) });
    assert.equal((await reopened.searchMessages("zqxpgclearq", { owner: "alice" })).length, 5);
    await reopened.close();
  } finally {
    await dropSchema(pool, schema);
    await pool.end();
  }
});
