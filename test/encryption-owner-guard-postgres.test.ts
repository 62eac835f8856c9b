// A sealed write in a Postgres store opened with a keyring (one server, PGlite and a Citus cluster) whose session
// was deleted and created again under its id, by another store, for another owner: the store's cached owner (and
// that owner's key check) must not seal the write under the first owner's key into the second owner's session. The
// statement's guard compares the session's owner too, and a refused write looks the owner up again as a first write
// does: sealed under the new owner's key when the keyring has it, refused DECRYPT_FAILED when not, in clear for an
// owner without a key. An overlay (its summary) is guarded as a message is, and so are a block and an entry recorded
// for the session.
import assert from "node:assert/strict";
import { SessionManager } from "../src/manager/manager.js";
import type { PostgresStore } from "../src/postgres/index.js";
import { msg } from "../src/testing/contract/harness.js";
import { randomKeyring, textOf } from "./helpers/encryption.js";
import {
  describePlaces,
  type Place,
  type PlaceCase,
  stored,
  twoStores,
} from "./helpers/two-stores-postgres.js";

/** Store `b` deletes session `id` and creates it again for `owner`, with one message `first` when given. */
async function recreate(b: PostgresStore, id: string, owner: string, first?: string) {
  const manager = SessionManager.create(b);
  assert.equal(await manager.delete(id), true);
  await manager.create(`${owner} chat`, { id, owner });
  if (first) await b.session(id).appendMessage(msg(first, `${owner} says ${first}`));
}

/** Store `a` has session `id` for alice, its owner and key check cached by two sealed appends. */
async function aliceCached(a: PostgresStore, id: string) {
  await SessionManager.create(a).create("alice chat", { id, owner: "alice" });
  await a.session(id).appendMessage(msg("a0", "alice sealed"));
  await a.session(id).appendMessage(msg("a1", "alice sealed again"));
}

// Both stores have bob's key (and alice's): A's append after the session became bob's is sealed under bob's key,
// which B reads; so is a rewrite after the session became alice's again. The next append is one statement again.
async function reusedForOwnerWithKey(place: Place) {
  const id = "reused";
  const ring = randomKeyring(["alice", "bob"]);
  await twoStores(place, ring, ring, async (a, b) => {
    await aliceCached(a, id);
    await recreate(b, id, "bob", "b0");
    await a.session(id).appendMessage(msg("x0", "written by A for bob"));
    const before = place.statements();
    await a.session(id).appendMessage(msg("x1", "written by A for bob again"));
    assert.equal(place.statements() - before, 1, "a sealed append of a known owner is one statement");
    assert.deepEqual(
      (await b.session(id).getHistory()).map(textOf),
      ["bob says b0", "written by A for bob", "written by A for bob again"],
      "bob reads A's writes",
    );
    assert.deepEqual(await stored(place, id), [
      { id: "b0", sealed: true },
      { id: "x0", sealed: true },
      { id: "x1", sealed: true },
    ]);
    // A's cache says bob now; the session becomes alice's again and A rewrites a message of hers.
    await recreate(b, id, "alice", "m0");
    await a.session(id).updateMessage(msg("m0", "rewritten by A for alice"));
    assert.equal(textOf(await b.session(id).getMessage("m0")), "rewritten by A for alice");
    // A's cache says alice now; the session becomes bob's again and A adds an overlay of it.
    await recreate(b, id, "bob", "m1");
    await a.session(id).addCompaction("A's summary for bob", "m1", "m1");
    assert.deepEqual(
      (await b.session(id).getCompactions()).map((c) => c.summary),
      ["A's summary for bob"],
    );
  });
}

// A lacks bob's key: its append after the session became bob's is refused (as A's first append would be) and writes
// nothing; after it became carol's (no key anywhere) it is in clear, as a first append of any store would be.
async function reusedForOwnerWithoutKey(place: Place) {
  const [alice, bob] = [randomKeyring(["alice"]), randomKeyring(["bob"])];
  await twoStores(place, alice, bob, async (a, b) => {
    await aliceCached(a, "for-bob");
    await recreate(b, "for-bob", "bob", "b0");
    await assert.rejects(a.session("for-bob").appendMessage(msg("x0", "not under alice's key")), {
      code: "DECRYPT_FAILED",
      message: /Owner "bob" has encrypted content but the keyring has no key for it/,
    });
    assert.deepEqual(await stored(place, "for-bob"), [{ id: "b0", sealed: true }]);
    assert.equal(textOf(await b.session("for-bob").getMessage("b0")), "bob says b0");
  });
  await twoStores(place, alice, bob, async (a, b) => {
    await aliceCached(a, "for-carol");
    await recreate(b, "for-carol", "carol");
    await a.session("for-carol").appendMessage(msg("c0", "carol has no key"));
    assert.deepEqual(await stored(place, "for-carol"), [{ id: "c0", sealed: false }]);
    assert.equal(textOf(await b.session("for-carol").getMessage("c0")), "carol has no key");
    // A found carol's session in clear; it becomes bob's, whose key A lacks: A's append, then (carol's and bob's
    // again) its overlay, are refused, not written in clear (on a cluster, whose writes in clear carry no guard, by
    // the look-up, which reads the session's owner with the check).
    await recreate(b, "for-carol", "bob", "b1");
    await assert.rejects(a.session("for-carol").appendMessage(msg("c1", "would be plaintext")), {
      code: "DECRYPT_FAILED",
    });
    await recreate(b, "for-carol", "carol");
    await a.session("for-carol").appendMessage(msg("c2", "carol has no key"));
    await recreate(b, "for-carol", "bob", "b2");
    await assert.rejects(a.session("for-carol").addCompaction("would be plaintext", "b2", "b2"), {
      code: "DECRYPT_FAILED",
    });
    assert.deepEqual(await stored(place, "for-carol"), [{ id: "b2", sealed: true }]);
    assert.deepEqual(await b.session("for-carol").getCompactions(), []);
  });
}

// Deleted and not created again: the session has no owner, so A's append goes in clear as a first append would
// (not under alice's key into a session no owner's key opens).
async function deletedNotCreatedAgain(place: Place) {
  const id = "deleted";
  await twoStores(place, ["alice"], ["alice"], async (a, b) => {
    await aliceCached(a, id);
    assert.equal(await SessionManager.create(b).delete(id), true);
    await a.session(id).appendMessage(msg("n0", "no owner now"));
    assert.deepEqual(await stored(place, id), [{ id: "n0", sealed: false }]);
    assert.equal(textOf(await b.session(id).getMessage("n0")), "no owner now");
  });
}

// A block and an entry recorded for the session are guarded as its messages are (context-guard.ts): after the
// session became bob's, A's writes of them are sealed under bob's key (B opens them), one statement each once A
// knows bob (on a cluster, a guard statement and the write in a transaction).
async function recordedRowsOfReusedSession(place: Place) {
  const id = "rows";
  const ring = randomKeyring(["alice", "bob"]);
  const record = { sessionId: id };
  await twoStores(place, ring, ring, async (a, b) => {
    await aliceCached(a, id);
    await a.blocks.setBlock(`notes-${id}`, "alice's notes", record);
    await a.entries.setEntry(`facts-${id}`, "k", "alice's fact", record);
    await recreate(b, id, "bob", "b0");
    await a.blocks.setBlock(`notes-${id}`, "bob's notes by A", record);
    await a.entries.setEntry(`facts-${id}`, "k", "bob's fact by A", record);
    assert.equal(await b.blocks.getBlock(`notes-${id}`), "bob's notes by A");
    assert.deepEqual(
      (await b.entries.searchEntries(`facts-${id}`, "fact")).map((hit) => hit.content),
      ["bob's fact by A"],
    );
    const before = place.statements();
    await a.blocks.setBlock(`notes-${id}`, "bob's notes again", record);
    await a.entries.setEntry(`facts-${id}`, "k", "bob's fact again", record);
    // On a cluster the row is on its key's shard, not its session's: the guard is a statement before the write, in
    // one transaction with it (context-guard.ts), so BEGIN, guard, upsert, COMMIT.
    const each = place.distributed ? 4 : 1;
    assert.equal(place.statements() - before, 2 * each, "a recorded row of a known owner: one statement");
    // A compare-and-set of the block is guarded too (the delete took the session's recorded rows).
    await recreate(b, id, "alice", "m0");
    assert.equal(await a.blocks.setBlockIf!(`notes-${id}`, null, "alice's again", record), true);
    assert.equal(await b.blocks.getBlock(`notes-${id}`), "alice's again");
  });
}

// With only alice's key, A's writes of the session's recorded rows after it became bob's are refused, not sealed
// under alice's key.
async function recordedRowsRefused(place: Place) {
  const [alice, bob] = [randomKeyring(["alice"]), randomKeyring(["bob"])];
  await twoStores(place, alice, bob, async (a, b) => {
    const other = "rows-refused";
    await aliceCached(a, other);
    await a.blocks.setBlock(`notes-${other}`, "alice's notes", { sessionId: other });
    await recreate(b, other, "bob", "b0");
    const refused = { code: "DECRYPT_FAILED" };
    await assert.rejects(
      a.blocks.setBlock(`notes-${other}`, "not under alice's key", { sessionId: other }),
      refused,
    );
    await assert.rejects(
      a.entries.setEntry(`facts-${other}`, "k", "not under alice's key", { sessionId: other }),
      refused,
    );
    await b.blocks.setBlock(`notes-${other}`, "bob's own", { sessionId: other });
    assert.equal(await b.blocks.getBlock(`notes-${other}`), "bob's own");
    assert.equal(await b.entries.countEntries(`facts-${other}`), 0);
  });
}

// Concurrent writers of one key, recorded for an encrypted owner's session or for none: exactly one compare-and-set
// wins; concurrent streamed answers all keep their chunks. On a cluster a guard inside the upsert made it an INSERT … SELECT through the coordinator, and concurrent
// writers deadlocked upgrading their lock on the key table's shard.
async function concurrentWriters(place: Place) {
  const ring = randomKeyring(["alice"]);
  await twoStores(place, ring, ring, async (a) => {
    await aliceCached(a, "busy");
    const record = { sessionId: "busy" };
    for (let round = 0; round < 3; round++) {
      const writers = Array.from({ length: 8 }, (_, i) => i);
      const recorded = await Promise.all(
        writers.map((i) => a.blocks.setBlockIf!(`notes-busy-${round}`, null, `writer ${i}`, record)),
      );
      assert.equal(recorded.filter(Boolean).length, 1, "one recorded writer wins");
      const unrecorded = await Promise.all(
        writers.map((i) => a.blocks.setBlockIf!(`free-${round}`, null, `writer ${i}`)),
      );
      assert.equal(unrecorded.filter(Boolean).length, 1, "one unrecorded writer wins");
      await Promise.all(
        writers.map((i) => a.blocks.setBlock(`plain-busy-${round}-${i}`, `plain ${i}`, record)),
      );
    }
    assert.equal(await a.blocks.getBlock("plain-busy-2-7"), "plain 7");
    // Streamed answers of several sessions at once: their chunks are guarded as a message's content is.
    const chats = ["busy-0", "busy-1", "busy-2", "busy-3"];
    for (const id of chats) await aliceCached(a, id);
    const chunk = (seq: number) => ({ seq, chunk: `data: ${seq}\n\n` });
    await Promise.all(
      chats.map(async (id) => {
        await a.streams.start(id, "answer", 1000);
        for (let seq = 0; seq < 3; seq++)
          assert.equal(await a.streams.append(id, "answer", [chunk(seq)], 1001), true);
      }),
    );
    assert.equal((await a.streams.read("busy-3", "answer", -1, 10))?.chunks.length, 3);
  });
}

const cases: PlaceCase[] = [
  [
    "a block or entry recorded for the session: sealed under the new owner's key",
    recordedRowsOfReusedSession,
  ],
  ["a block or entry recorded for the session: refused without the new owner's key", recordedRowsRefused],
  ["created again for an owner whose key the store has: sealed under that key", reusedForOwnerWithKey],
  [
    "created again for an owner whose key the store lacks: refused, or in clear without one",
    reusedForOwnerWithoutKey,
  ],
  ["deleted and not created again: in clear, as a first write", deletedNotCreatedAgain],
  [
    "concurrent writers of a key (one compare-and-set wins) and of streams: none deadlocks",
    concurrentWriters,
  ],
];

// On a cluster a sealed append runs the guarded statement (citus/append-path.ts): the same guard, routed.
await describePlaces("a sealed write of a session given another owner", "owner", cases, true);
