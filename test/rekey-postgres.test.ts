// Key rotation on Postgres and PGlite (docs/PRIVACY.md, "Key rotation"): an owner's messages move from the old key
// to the new one in batches; stopped halfway every message reads back (some under each key), the next run resumes
// and finishes, and then the old key is refused. A wrong old key is refused before anything is written, and a
// process still sealing under the old key (its check cached) is refused at its next write.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionMessage } from "../src/contract/message.js";
import { SessionManager } from "../src/manager/manager.js";
import type { PostgresStore } from "../src/postgres/index.js";
import type { RekeyProgress } from "../src/store/crypto/rekey-options.js";
import { keyId, sealedStart } from "../src/store/crypto/seal.js";
import { msg } from "../src/testing/contract/harness.js";
import { SECRET, said, textOf } from "./helpers/encryption.js";
import {
  aliceKeyring,
  newKey,
  onEveryPlace,
  openAt,
  type Place,
  type PlaceCases,
} from "./helpers/rekey-places.js";

/** Alice: two sessions of 10 messages each under `key`; bob: one plain message. Answers alice's session ids. */
async function seed(p: Place, key: Uint8Array): Promise<string[]> {
  const store = await openAt(p, aliceKeyring(key));
  const manager = SessionManager.create(store);
  const sessions: string[] = [];
  for (const name of ["one", "two"]) {
    const { id } = await manager.create(name, { owner: "alice" });
    for (let i = 0; i < 10; i++) await manager.append(id, msg(`${name}-${i}`, said(i)));
    sessions.push(id);
  }
  const { id: bob } = await manager.create("bob", { owner: "bob" });
  await manager.append(bob, msg("b0", "bob plain words"));
  await store.close();
  return sessions;
}

/** A count the database answers. */
async function count(p: Place, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await p.db.query(sql, params);
  return (rows[0] as { n: number }).n;
}

/** Messages sealed under `key` (their first bytes name it). */
async function rowsUnder(p: Place, key: Uint8Array): Promise<number> {
  const start = sealedStart(keyId(key));
  return count(
    p,
    `SELECT count(*)::int AS n FROM "${p.schema}".agent_messages WHERE left(content, $1) = $2`,
    [start.length, start],
  );
}

async function texts(store: PostgresStore, sessionId: string): Promise<(string | undefined)[]> {
  return (await store.session(sessionId).getHistory()).map((m: SessionMessage) => textOf(m));
}

const expected = Array.from({ length: 10 }, (_, i) => said(i));

/** The cases, on one database. */
const rekeyCases: PlaceCases = (label, place, done) => {
  test(`${label} rekey: an abort halfway leaves both keys readable, a second run resumes and finishes`, async () => {
    const p = await place("rotate");
    try {
      const [oldKey, key] = [newKey(), newKey()];
      const sessions = await seed(p, oldKey);
      const store = await openAt(p, aliceKeyring(key, [oldKey]));
      const stop = new AbortController();
      const seen: RekeyProgress[] = [];
      await assert.rejects(
        store.rekey("alice", {
          batchSize: 7,
          signal: stop.signal,
          onProgress: (progress) => {
            seen.push(progress);
            if (seen.length === 2) stop.abort();
          },
        }),
        { name: "AbortError" },
      );
      assert.deepEqual(
        seen.map((s) => [s.done, s.total, s.resealed]),
        [
          [7, 20, 7],
          [14, 20, 14],
        ],
      );
      assert.equal(await rowsUnder(p, key), 14);
      assert.equal(await rowsUnder(p, oldKey), 6);
      // Reads during the rotation open both keys; a write seals under the new one.
      for (const id of sessions) assert.deepEqual(await texts(store, id), expected);
      await store.session(sessions[1]!).appendMessage(msg("two-10", said(10)));
      assert.equal(await rowsUnder(p, key), 15);
      const oldOnly = await openAt(p, aliceKeyring(oldKey));
      await assert.rejects(oldOnly.session(sessions[0]!).getHistory(), { code: "DECRYPT_FAILED" });
      await assert.rejects(oldOnly.session(sessions[0]!).appendMessage(msg("x", "old key write")), {
        code: "DECRYPT_FAILED",
      });
      await oldOnly.close();

      const report = await store.rekey("alice", { batchSize: 7 });
      assert.equal(report.resumed, true);
      assert.equal(report.total, 21);
      assert.equal(report.resealed, 6);
      assert.equal(report.keyId, keyId(key));
      assert.equal(await rowsUnder(p, oldKey), 0);
      assert.equal(await rowsUnder(p, key), 21);
      assert.equal(
        await count(p, `SELECT count(*)::int AS n FROM "${p.schema}".agent_owner_rekeys`),
        0,
        "the rotation's record is gone",
      );
      await store.close();
      // The new key alone reads everything; a second run has nothing to do.
      const after = await openAt(p, aliceKeyring(key));
      assert.deepEqual(await texts(after, sessions[0]!), expected);
      assert.deepEqual(await texts(after, sessions[1]!), [...expected, said(10)]);
      // Her session names were re-sealed too: no name is left under the old key, and the new one opens them.
      assert.equal(
        await count(
          p,
          `SELECT count(*)::int AS n FROM "${p.schema}".agent_sessions WHERE left(name, ${sealedStart(keyId(oldKey)).length}) = '${sealedStart(keyId(oldKey))}'`,
        ),
        0,
      );
      assert.ok((await after.registry.list({ owner: "alice" })).every((s) => s.name !== "" && !s.nameSealed));
      const again = await after.rekey("alice");
      assert.deepEqual([again.resealed, again.resumed], [0, false]);
      await after.close();
    } finally {
      await done(p);
    }
  });

  test(`${label} rekey: a wrong old key is DECRYPT_FAILED before anything is written; bad input is refused`, async () => {
    const p = await place("wrong");
    try {
      const [oldKey, key, wrong] = [newKey(), newKey(), newKey()];
      await seed(p, oldKey);
      const store = await openAt(p, aliceKeyring(key, [wrong]));
      await assert.rejects(store.rekey("alice"), { code: "DECRYPT_FAILED" });
      await assert.rejects(
        store.rekey("nobody"),
        { code: "INVALID_ARGUMENT" },
        "the keyring has no key for it",
      );
      await assert.rejects(store.rekey("alice", { batchSize: 0 }), { code: "INVALID_ARGUMENT" });
      assert.equal(await rowsUnder(p, oldKey), 20, "nothing was re-sealed");
      assert.equal(
        await count(p, `SELECT count(*)::int AS n FROM "${p.schema}".agent_owner_rekeys`),
        0,
        "no rotation was started",
      );
      await store.close();
      const plain = await openAt(p);
      await assert.rejects(plain.rekey("alice"), { code: "INVALID_ARGUMENT" });
      await plain.close();
    } finally {
      await done(p);
    }
  });

  test(`${label} rekey: a process still on the old key is refused at its next write, nothing sealed under it`, async () => {
    const p = await place("stale");
    try {
      const [oldKey, key] = [newKey(), newKey()];
      const sessions = await seed(p, oldKey);
      // This process knows alice's key check already: its appends read it no more.
      const stale = await openAt(p, aliceKeyring(oldKey));
      await stale.session(sessions[0]!).appendMessage(msg("s0", said(20)));
      const rotating = await openAt(p, aliceKeyring(key, [oldKey]));
      const report = await rotating.rekey("alice", { batchSize: 50 });
      assert.equal(report.resealed, 21);
      await assert.rejects(stale.session(sessions[0]!).appendMessage(msg("s1", said(21))), {
        code: "DECRYPT_FAILED",
      });
      await assert.rejects(
        stale.session(sessions[0]!).updateMessage(msg("one-1", "rewritten under the old key")),
        { code: "DECRYPT_FAILED" },
      );
      assert.equal(await rowsUnder(p, oldKey), 0, "nothing was written under the old key");
      assert.equal(await stale.session(sessions[0]!).getMessage("s1"), null);
      await stale.close();
      await rotating.close();
    } finally {
      await done(p);
    }
  });

  test(`${label} rekey: a process that cached the old check reads, searches and writes after a rotation elsewhere dropped the old key`, async () => {
    const p = await place("stale");
    try {
      const [oldKey, key] = [newKey(), newKey()];
      const sessions = await seed(p, oldKey);
      // This process's keyring is the app's: it answers the old key now, the new one alone after the rotation.
      let current = oldKey;
      const stale = await openAt(p, { key: (owner) => (owner === "alice" ? current : undefined) });
      const search = async () =>
        (await stale.searchMessages(SECRET, { sessionId: sessions[0]! })).map((h) => h.id).sort();
      assert.equal((await search()).length, 10, "the old check and no rotation are cached now");
      const other = await openAt(p, aliceKeyring(key, [oldKey]));
      await other.rekey("alice");
      await other.close();
      current = key;
      assert.deepEqual(await texts(stale, sessions[0]!), expected);
      assert.equal((await search()).length, 10, "found under the new key's tokens");
      await stale.session(sessions[1]!).appendMessage(msg("two-10", said(10)));
      assert.equal(await rowsUnder(p, key), 21, "the write is sealed under the new key");
      await stale.close();
    } finally {
      await done(p);
    }
  });

  test(`${label} rekey: a process with both keys whose cached check is the old one writes during a rotation`, async () => {
    const p = await place("both");
    try {
      const [oldKey, key, third] = [newKey(), newKey(), newKey()];
      const sessions = await seed(p, oldKey);
      const both = await openAt(p, aliceKeyring(key, [oldKey]));
      // A read caches the owner's (old) check in this process without starting anything.
      assert.deepEqual(await texts(both, sessions[0]!), expected);
      const rotating = await openAt(p, aliceKeyring(key, [oldKey]));
      const stop = new AbortController();
      await assert.rejects(
        rotating.rekey("alice", { batchSize: 5, signal: stop.signal, onProgress: () => stop.abort() }),
        { name: "AbortError" },
      );
      await both.session(sessions[0]!).appendMessage(msg("b1", said(30)));
      assert.equal(textOf(await both.session(sessions[0]!).getMessage("b1")), said(30));
      assert.equal(await rowsUnder(p, key), 6, "the first batch and the write");
      // A rotation to a third key while this one is under way is refused.
      const other = await openAt(p, aliceKeyring(third, [key, oldKey]));
      await assert.rejects(other.session(sessions[0]!).appendMessage(msg("t", said(31))), {
        code: "CONFLICT",
      });
      await assert.rejects(other.rekey("alice"), { code: "CONFLICT" });
      await other.close();
      assert.equal((await both.rekey("alice")).resumed, true);
      assert.equal(await rowsUnder(p, oldKey), 0);
      await both.close();
      await rotating.close();
      await rotating.close();
    } finally {
      await done(p);
    }
  });
};

await onEveryPlace(rekeyCases);
