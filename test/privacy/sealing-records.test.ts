// Sealing reads a context row's record (docs/PRIVACY.md, "Whose a block is"): a block or entry recorded as an
// owner's is sealed under that owner's key and a session-recorded one under its session's owner's, whatever its key's
// suffix names; only a row with no record keeps the suffix rule. Alice holds a session whose id is `bob`: owner
// bob's `profile_bob` must never be sealed (or opened) with alice's key.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { ContextCapableStore } from "../../src/contract/context.js";
import { SessionError } from "../../src/errors.js";
import { SessionManager } from "../../src/manager/manager.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { citusPool, citusUnavailable } from "../fixtures/citus-db.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { randomKeyring } from "../helpers/encryption.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-sealrec-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A keyring answering only `owner`'s key of `keyring`. */
function only(keyring: ReturnType<typeof randomKeyring>, owner: string): Keyring {
  return { key: (asked) => (asked === owner ? keyring.keys.get(owner) : undefined) };
}

const refused = (error: unknown) => error instanceof SessionError && error.code === "DECRYPT_FAILED";

/** Alice owns session `bob`; the rows: owner bob's, the session's, and unrecorded ones (the suffix rule). */
async function seed(store: ContextCapableStore): Promise<void> {
  await SessionManager.create(store).create("alice's", { owner: "alice", id: "bob" });
  await store.blocks.setBlock("profile_bob", "bob owns this", { owner: "bob" });
  await store.entries.setEntry("notes_bob", "k", "bob writes zebras", { owner: "bob" });
  await store.blocks.setBlock("prefs", "alice prefers tea", { sessionId: "bob" });
  await store.entries.setEntry("facts", "k", "alice keeps otters", { sessionId: "bob" });
  await store.blocks.setBlock("memo_bob", "unrecorded memo");
  await store.entries.setEntry("log_bob", "k", "unrecorded lemurs");
  // A later write with no record (or another one) keeps the block's record, and is sealed for it. An entry's key
  // names a row per owner key (its stored key is a digest under the key, src/context/entry-keys.ts): bob's entry is
  // written again as his (a write recorded for session bob, alice's, would make a row of hers beside it).
  await store.blocks.setBlock("profile_bob", "bob still owns this");
  await store.entries.setEntry("notes_bob", "k", "bob still writes zebras", { owner: "bob" });
  assert.equal(
    await store.blocks.setBlockIf?.("profile_bob", "bob still owns this", "bob owns it now"),
    true,
  );
}

/** What each one-owner keyring opens: alice's her session's and the unrecorded rows, bob's only his. */
async function assertOpens(
  open: (keyring: Keyring) => Promise<ContextCapableStore>,
  keyring: ReturnType<typeof randomKeyring>,
) {
  const alice = await open(only(keyring, "alice"));
  try {
    await assert.rejects(
      alice.blocks.getBlock("profile_bob"),
      refused,
      "owner bob's block is not alice's to open",
    );
    await assert.rejects(alice.entries.searchEntries("notes_bob", "zebras"), refused);
    assert.equal(await alice.blocks.getBlock("prefs"), "alice prefers tea");
    assert.deepEqual(await alice.entries.searchEntries("facts", "otters"), [
      { key: "k", content: "alice keeps otters" },
    ]);
    assert.equal(
      await alice.blocks.getBlock("memo_bob"),
      "unrecorded memo",
      "no record: the suffix names session bob",
    );
    assert.deepEqual(await alice.entries.searchEntries("log_bob", "lemurs"), [
      { key: "k", content: "unrecorded lemurs" },
    ]);
  } finally {
    await alice.close();
  }
  const bob = await open(only(keyring, "bob"));
  try {
    assert.equal(await bob.blocks.getBlock("profile_bob"), "bob owns it now");
    assert.deepEqual(await bob.entries.searchEntries("notes_bob", "zebras"), [
      { key: "k", content: "bob still writes zebras" },
    ]);
    await assert.rejects(bob.blocks.getBlock("prefs"), refused, "session bob's block is its owner alice's");
    await assert.rejects(bob.blocks.getBlock("memo_bob"), refused);
  } finally {
    await bob.close();
  }
}

/** Owners' current keys and the ones a rotation moves from; `rotated` gives an owner a new key. */
function rotating(owners: readonly string[]) {
  const current = new Map(owners.map((owner) => [owner, crypto.getRandomValues(new Uint8Array(32))]));
  const previous = new Map<string, Uint8Array[]>();
  const keyring: ReturnType<typeof randomKeyring> & Keyring = {
    keys: current,
    key: (owner) => current.get(owner),
    previousKeys: (owner) => previous.get(owner) ?? [],
  };
  const rotated = (owner: string) => {
    previous.set(owner, [current.get(owner)!]);
    current.set(owner, crypto.getRandomValues(new Uint8Array(32)));
  };
  return { keyring, rotated };
}

/** A rotation of each owner re-seals its rows by their records: each then opens with the new key alone. */
async function assertRotations(
  store: ContextCapableStore & { rekey(owner: string): Promise<unknown> },
  open: (keyring: Keyring) => Promise<ContextCapableStore>,
  at: ReturnType<typeof rotating>,
) {
  at.rotated("alice");
  await store.rekey("alice");
  at.rotated("bob");
  await store.rekey("bob");
  await store.close();
  await assertOpens(open, at.keyring);
}

test("SQLite: a block or entry is sealed under its record's owner's key, an unrecorded one by the suffix rule", async () => {
  const path = join(dir, "records.db");
  const keyring = randomKeyring(["alice", "bob"]);
  const store = new SqliteStore(path, { keyring });
  await seed(store);
  await store.close();
  await assertOpens(async (only) => new SqliteStore(path, { keyring: only }), keyring);
});

test("SQLite: alice's erasure removes her session's rows and her key, and owner bob's block stays his, readable", async () => {
  const path = join(dir, "erasure.db");
  const keyring = randomKeyring(["alice", "bob"]);
  const store = new SqliteStore(path, { keyring });
  await seed(store);
  await SessionManager.create(store).eraseOwner("alice");
  assert.equal(keyring.keys.has("alice"), false, "alice's key is destroyed");
  assert.equal(await store.blocks.getBlock("prefs"), null);
  assert.deepEqual(await store.entries.searchEntries("facts", "otters"), []);
  assert.equal(await store.blocks.getBlock("profile_bob"), "bob owns it now");
  assert.deepEqual(await store.entries.searchEntries("notes_bob", "zebras"), [
    { key: "k", content: "bob still writes zebras" },
  ]);
  await store.close();
});

test("SQLite: a key rotation re-seals each block and entry for its record's owner", async () => {
  const path = join(dir, "rotation.db");
  const at = rotating(["alice", "bob"]);
  const store = new SqliteStore(path, { keyring: at.keyring });
  await seed(store);
  await assertRotations(store, async (only) => new SqliteStore(path, { keyring: only }), at);
});

test("PGlite: a block or entry is sealed under its record's owner's key, an unrecorded one by the suffix rule", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const keyring = randomKeyring(["alice", "bob"]);
    const store = await PostgresStore.open(db, { keyring });
    await seed(store);
    await store.close();
    await assertOpens((only) => PostgresStore.open(db, { keyring: only }), keyring);
  } finally {
    await db.close();
  }
});

test("PGlite: a key rotation re-seals each block and entry for its record's owner", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const at = rotating(["alice", "bob"]);
    const store = await PostgresStore.open(db, { keyring: at.keyring });
    await seed(store);
    await assertRotations(store, (only) => PostgresStore.open(db, { keyring: only }), at);
  } finally {
    await db.close();
  }
});

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the Postgres sealing-records test: ${unavailable}`);

describe("Postgres: sealing by record", { skip: unavailable ?? false }, () => {
  const pool = unavailable ? undefined : testPool(2);
  const schema = `agent_session_sealrec_${process.pid}`;
  after(async () => {
    if (!pool) return;
    await dropSchema(pool, schema);
    await pool.end();
  });

  test("a block or entry is sealed under its record's owner's key, an unrecorded one by the suffix rule", async () => {
    await dropSchema(pool!, schema);
    const keyring = randomKeyring(["alice", "bob"]);
    const store = await PostgresStore.open(pool!, { schema, keyring });
    await seed(store);
    await store.close();
    await assertOpens((only) => PostgresStore.open(pool!, { schema, keyring: only }), keyring);
  });
});

const noCitus = await citusUnavailable();
if (noCitus) console.log(`Skipping the Citus sealing-records test: ${noCitus}`);

describe("Citus: sealing by record", { skip: noCitus ?? false }, () => {
  const pool = noCitus ? undefined : citusPool(2);
  const schema = `agent_session_citus_sealrec_${process.pid}`;
  after(async () => {
    if (!pool) return;
    await dropSchema(pool, schema);
    await pool.end();
  });

  test("a block or entry is sealed under its record's owner's key, and a rotation re-seals it for that owner", async () => {
    await dropSchema(pool!, schema);
    const options = { schema, distributed: true };
    const at = rotating(["alice", "bob"]);
    const store = await PostgresStore.open(pool!, { ...options, keyring: at.keyring });
    await seed(store);
    const open = (only: Keyring) => PostgresStore.open(pool!, { ...options, keyring: only });
    await assertOpens(open, at.keyring);
    await assertRotations(store, open, at);
  });
});
