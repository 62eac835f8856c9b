// Encryption at rest on Postgres and PGlite: an owner with a key has no plaintext in any page of the store's
// relations (heap, TOAST, indexes; read with pageinspect) nor in PGlite's files, reads open it back, a wrong or
// missing key is DECRYPT_FAILED, and erasing the owner destroys its key so a copy taken before cannot be read.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { PGlite } from "@electric-sql/pglite";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import type { SessionMessage } from "../src/contract/message.js";
import type { TransferItem } from "../src/contract/transfer.js";
import { SessionManager } from "../src/manager/manager.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/index.js";
import { msg } from "../src/testing/contract/harness.js";
import { newPGlite } from "./fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "./fixtures/postgres-db.js";
import { occurrences, randomKeyring, SECRET, said, seedOwners, textOf } from "./helpers/encryption.js";
import { readsBack, refusals } from "./helpers/encryption-postgres.js";
import { markersInRelations, total } from "./helpers/purge.js";

// A long secret of random hex: no repetition a compressor could fold, and past TOAST's 2 kB threshold, so the
// row goes out of line (STORAGE EXTERNAL below keeps it uncompressed there): the page check then reads TOAST too.
const randomHex = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(1500)), (b) => b.toString(16).padStart(2, "0")).join("");
const LONG = `${SECRET}${randomHex()}`;
const BOB_LONG = `bob ${randomHex()}`;

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the PostgreSQL server encryption tests: ${unavailable}`);

describe("Postgres encryption at rest", { skip: unavailable ?? false }, () => {
  const pool = unavailable ? undefined : testPool(4);
  after(() => pool?.end());

  test("sealed round trip; no byte of the plaintext in any page of the store's relations", async () => {
    const schema = `agent_session_seal_${process.pid}`;
    const db = pool!;
    await dropSchema(db, schema);
    const store = await PostgresStore.open(db, { schema, keyring: randomKeyring(["alice"]) });
    try {
      // Out of line and uncompressed: a long content is then in the TOAST table as it is (see LONG).
      await db.query(`ALTER TABLE "${schema}".agent_messages ALTER COLUMN content SET STORAGE EXTERNAL`);
      const { alice, bob } = await seedOwners(store);
      await readsBack(store, alice);
      await store.session(alice).appendMessage(msg("long", LONG), "a0");
      await store.session(bob).appendMessage(msg("blong", BOB_LONG));
      assert.equal(textOf(await store.session(alice).getMessage("long")), LONG);
      await db.query("CHECKPOINT");
      const alices = await markersInRelations(db, schema, said(1));
      assert.equal(total(alices), 0, JSON.stringify(alices));
      assert.equal(total(await markersInRelations(db, schema, SECRET)), 0, "nor in the search index");
      assert.equal(total(await markersInRelations(db, schema, "edited secret")), 0);
      assert.equal(total(await markersInRelations(db, schema, LONG.slice(-200))), 0, "nor in TOAST");
      // The check reads what it should: bob's clear text, in line and in TOAST, is found.
      assert.ok(total(await markersInRelations(db, schema, "bob plain words")) > 0);
      assert.ok(total(await markersInRelations(db, schema, BOB_LONG.slice(-200))) > 0);
      await refusals(db, { schema }, alice, bob);
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM "${schema}".agent_messages`);
      assert.equal(rows[0]?.n, 9, "nothing was written by the refused appends (7 of alice, 2 of bob)");
    } finally {
      await store.close();
      await dropSchema(db, schema);
    }
  });

  test("eraseOwner forgets the key and removes its check (the copy taken before: the PGlite test)", async () => {
    const schema = `agent_session_shred_${process.pid}`;
    const db = pool!;
    await dropSchema(db, schema);
    const keyring = randomKeyring(["alice"]);
    const store = await PostgresStore.open(db, { schema, keyring });
    try {
      const { manager } = await seedOwners(store);
      const checks = async () =>
        (await db.query(`SELECT count(*)::int AS n FROM "${schema}".agent_owner_keys`)).rows[0] as {
          n: number;
        };
      assert.equal((await checks()).n, 1, "alice's key check, recorded with her first message");
      await manager.eraseOwner("alice");
      assert.equal(keyring.keys.has("alice"), false, "the keyring forgot alice's key");
      assert.equal((await checks()).n, 0, "and the check is gone");
    } finally {
      await store.close();
      await dropSchema(db, schema);
    }
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

test("PGlite: sealed round trip, no plaintext in its pages or files, refusals, and a copy taken before erasure", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-pglite-seal-"));
  try {
    const dataDir = join(dir, "db");
    const keyring = randomKeyring(["alice"]);
    let db: PGlite = await newPGlite({ dataDir, extensions: { pageinspect } });
    let store = await PostgresStore.open(db, { schema: "sealed", keyring });
    const { alice, bob } = await seedOwners(store);
    await readsBack(store, alice);
    await db.query("CHECKPOINT");
    assert.equal(total(await markersInRelations(db, "sealed", SECRET)), 0);
    assert.ok(total(await markersInRelations(db, "sealed", "bob plain words")) > 0);
    await refusals(db, { schema: "sealed" }, alice, bob);
    await store.close();
    await db.close();
    assert.equal(
      occurrences(filesUnder(dataDir), SECRET),
      0,
      "no plaintext of alice in PGlite's files (WAL too)",
    );
    assert.ok(occurrences(filesUnder(dataDir), "bob plain words") > 0, "the file check reads what it should");
    const copy = join(dir, "copy");
    cpSync(dataDir, copy, { recursive: true });
    db = await newPGlite({ dataDir });
    store = await PostgresStore.open(db, { schema: "sealed", keyring });
    await SessionManager.create(store).eraseOwner("alice");
    assert.equal(keyring.keys.has("alice"), false);
    await store.close();
    await db.close();
    // The copy taken before the erasure still holds alice's sealed rows and her key check; the key is gone.
    const old = await newPGlite({ dataDir: copy });
    const backup = await PostgresStore.open(old, { schema: "sealed", keyring });
    await assert.rejects(backup.session(alice).getHistory(), { code: "DECRYPT_FAILED" });
    await backup.close();
    await old.close();
    assert.equal(occurrences(filesUnder(copy), SECRET), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a keyring is refused where it would do nothing or is malformed", () => {
  assert.throws(() => new MemoryStore({ keyring: randomKeyring([]) } as never), { code: "INVALID_ARGUMENT" });
  const url = "postgres://nobody@127.0.0.1:1/none"; // never connected: the options are refused first
  assert.doesNotThrow(() => new PostgresStore(url, { keyring: randomKeyring([]) }));
  assert.throws(() => new PostgresStore(url, { keyring: {} as never }), { code: "INVALID_ARGUMENT" });
  assert.doesNotThrow(() => new PostgresStore(url, { keyring: randomKeyring([]), distributed: true }));
});

test("PGlite: an encrypted owner's media stays inline and sealed; an import into a keyring store seals again", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  const keyring = randomKeyring(["alice"]);
  const store = await PostgresStore.open(db, { schema: "media", keyring });
  try {
    const manager = SessionManager.create(store);
    const { id } = await manager.create("alice media", { owner: "alice" });
    const data = `data:image/png;base64,${Buffer.from(crypto.getRandomValues(new Uint8Array(300))).toString("base64")}`;
    const image = { id: "img", role: "user", parts: [{ type: "file", mediaType: "image/png", url: data }] };
    await store.session(id).appendMessage(image as SessionMessage);
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM media.agent_attachments`);
    assert.equal(rows[0]?.n, 0, "no payload row: the media is sealed with the message");
    assert.deepEqual((await store.session(id).getMessage("img"))?.parts, image.parts);
    await assert.rejects(store.session(id).appendMessage(msg("ptr", `attachment:sha256:${"0".repeat(64)}`)), {
      code: "INVALID_MESSAGE",
    });
    await manager.append(id, msg("t1", said(1)));
    const items: TransferItem[] = [];
    for await (const item of store.transfer.exportSession(id)) items.push(item);
    const target = await PostgresStore.open(db, { schema: "imported", keyring });
    async function* stream() {
      yield* items;
    }
    await target.transfer.importSession(stream());
    assert.equal(textOf((await target.session(id).getHistory()).at(-1)), said(1));
    const sealed = await db.query<{ n: number; words: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE search::text LIKE '%${SECRET}%')::int AS words
       FROM imported.agent_messages WHERE content LIKE '~sealed%'`,
    );
    assert.deepEqual(sealed.rows[0], { n: 2, words: 0 }, "the imported messages are sealed again");
    const found = await target.searchMessages(SECRET, { owner: "alice" });
    assert.deepEqual(
      found.map((h) => h.id),
      ["t1"],
      "and indexed again as alice's blind tokens",
    );
    await target.close();
  } finally {
    await store.close();
    await db.close();
  }
});

test("PGlite: a sealed append is as many statements as a clear one once the owner's key is known", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  const store = await PostgresStore.open(db, { schema: "counted", keyring: randomKeyring(["alice"]) });
  try {
    const manager = SessionManager.create(store);
    const { id: alice } = await manager.create("alice", { owner: "alice" });
    const { id: carol } = await manager.create("carol", { owner: "carol" }); // no key: stored in clear
    for (const id of [alice, carol]) await store.session(id).appendMessage(msg(`${id}-0`, said(0)));
    // Counts what reaches the engine from here on (PGlite's query and exec are what the store calls).
    let statements = 0;
    for (const method of ["query", "exec"] as const) {
      const original = db[method].bind(db) as (...args: unknown[]) => Promise<unknown>;
      (db as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        statements++;
        return original(...args);
      };
    }
    const appendCost = async (id: string, n: number) => {
      const before = statements;
      await store.session(id).appendMessage(msg(`${id}-${n}`, said(n)));
      return statements - before;
    };
    const sealed = [await appendCost(alice, 1), await appendCost(alice, 2)];
    const clear = await appendCost(carol, 1);
    assert.deepEqual(sealed, [1, 1], "a known owner's sealed append reads no key check again");
    // Carol has no key: her append is guarded by "no check recorded for her" instead of reading it again
    // (test/encryption-clear-guard-postgres.test.ts).
    assert.equal(clear, 1, "an append for an owner without a key reads no key check again");
  } finally {
    await store.close();
    await db.close();
  }
});
