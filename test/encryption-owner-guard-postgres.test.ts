// A sealed write in a Postgres store opened with a keyring (one server, PGlite and a Citus cluster) whose session
// was deleted and created again under its id, by another store, for another owner: the store's cached owner (and
// that owner's key check) must not seal the write under the first owner's key into the second owner's session. The
// statement's guard compares the session's owner too, and a refused write looks the owner up again as a first write
// does: sealed under the new owner's key when the keyring has it, refused DECRYPT_FAILED when not, in clear for an
// owner without a key. An overlay (its summary) is guarded as a message is.
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

const cases: PlaceCase[] = [
  ["created again for an owner whose key the store has: sealed under that key", reusedForOwnerWithKey],
  [
    "created again for an owner whose key the store lacks: refused, or in clear without one",
    reusedForOwnerWithoutKey,
  ],
  ["deleted and not created again: in clear, as a first write", deletedNotCreatedAgain],
];

// On a cluster a sealed append runs the guarded statement (citus/append-path.ts): the same guard, routed.
await describePlaces("a sealed write of a session given another owner", "owner", cases, true);
