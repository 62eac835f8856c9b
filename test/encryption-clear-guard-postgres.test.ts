// A write in clear in a Postgres store opened with a keyring (one server and PGlite): once a write of the process
// found the session in clear (no owner, or an owner without a key), the next ones read no owner nor key check; their
// statement refuses them when the owner has had a check recorded since (another process sealed for it) or the
// session has an owner since, and the append then does what a first one does: sealed, or refused DECRYPT_FAILED.
import assert from "node:assert/strict";
import { SessionManager } from "../src/manager/manager.js";
import type { PostgresStore } from "../src/postgres/index.js";
import { msg } from "../src/testing/contract/harness.js";
import { randomKeyring } from "./helpers/encryption.js";
import {
  describePlaces,
  open,
  type Place,
  type PlaceCase,
  stored,
  twoStores,
} from "./helpers/two-stores-postgres.js";

// After a session's first append, an append in clear costs a keyring store as many statements (one) as a store
// without a keyring: for an owner without a key and for a session without an owner.
async function clearAppendStatements(place: Place) {
  const keyed = await open(place, randomKeyring(["alice"]));
  const plain = await open(place, undefined, `${place.schema}_plain`);
  try {
    const { id: carol } = await SessionManager.create(keyed).create("carol", { owner: "carol" });
    const sessions: [PostgresStore, string][] = [
      [keyed, carol],
      [keyed, "no-owner"],
      [plain, "plain"],
    ];
    const costs: number[][] = [];
    for (const [store, id] of sessions) {
      await store.session(id).appendMessage(msg(`${id}-0`, "first"));
      const cost = async (n: number) => {
        const before = place.statements();
        await store.session(id).appendMessage(msg(`${id}-${n}`, `number ${n}`));
        return place.statements() - before;
      };
      costs.push([await cost(1), await cost(2)]);
    }
    assert.deepEqual(costs, [
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
  } finally {
    await Promise.all([keyed.close(), plain.close()]);
  }
}

// Store A's keyring has no key for carol; store B's has it and seals for her, which records her key check: A's next
// append, in clear under a guard that no check is recorded, is refused as a first append of A would be.
async function ownerGivenAKeyElsewhere(place: Place) {
  await twoStores(place, ["alice"], ["carol"], async (a, b) => {
    const { id } = await SessionManager.create(a).create("carol chat", { owner: "carol" });
    await a.session(id).appendMessage(msg("c0", "carol in clear"));
    await a.session(id).appendMessage(msg("c1", "carol in clear again"));
    await b.session(id).appendMessage(msg("c2", "carol sealed"));
    await assert.rejects(a.session(id).appendMessage(msg("c3", "would be plaintext")), {
      code: "DECRYPT_FAILED",
      message: /Owner "carol" has encrypted content but the keyring has no key for it \(session "/,
    });
    await assert.rejects(a.session(id).appendMessage(msg("c4", "still refused")), { code: "DECRYPT_FAILED" });
    assert.deepEqual(await stored(place, id), [
      { id: "c0", sealed: false },
      { id: "c1", sealed: false },
      { id: "c2", sealed: true },
    ]);
  });
}

// A session store A writes without an owner is registered with one later, by another store: dave, whose key A has,
// is sealed from then on (his first check recorded by A); erin, whose key A lacks, stays in clear.
async function ownerRegisteredLater(place: Place) {
  await twoStores(place, ["dave"], undefined, async (a, other) => {
    for (const owner of ["dave", "erin"]) {
      const id = `later-${owner}`;
      await a.session(id).appendMessage(msg(`${owner}0`, "no owner yet"));
      await a.session(id).appendMessage(msg(`${owner}1`, "no owner yet, again"));
      await SessionManager.create(other).create("registered", { id, owner });
      await a.session(id).appendMessage(msg(`${owner}2`, "an owner now"));
      await a.session(id).appendMessage(msg(`${owner}3`, "an owner now, again"));
      const sealed = owner === "dave";
      assert.deepEqual(await stored(place, id), [
        { id: `${owner}0`, sealed: false },
        { id: `${owner}1`, sealed: false },
        { id: `${owner}2`, sealed },
        { id: `${owner}3`, sealed },
      ]);
      assert.equal(
        (await a.session(id).getMessage(`${owner}3`))?.parts[0]?.type,
        "text",
        "read back either way",
      );
    }
  });
}

// A session store A wrote for carol (no key) is deleted and created again, same id, for frank, whose key store B has
// and seals under: A's next append, guarded on carol, must not write in clear for frank (its keyring lacks his key).
async function sessionGivenAnotherOwner(place: Place) {
  await twoStores(place, ["alice"], ["frank"], async (a, b) => {
    const id = "reused";
    await SessionManager.create(a).create("carol chat", { id, owner: "carol" });
    await a.session(id).appendMessage(msg("r0", "carol in clear"));
    await a.session(id).appendMessage(msg("r1", "carol in clear again"));
    assert.equal(await SessionManager.create(b).delete(id), true);
    await SessionManager.create(b).create("frank chat", { id, owner: "frank" });
    await b.session(id).appendMessage(msg("f0", "frank sealed"));
    await assert.rejects(a.session(id).appendMessage(msg("f1", "would be plaintext")), {
      code: "DECRYPT_FAILED",
    });
    assert.deepEqual(await stored(place, id), [{ id: "f0", sealed: true }]);
  });
}

const cases: PlaceCase[] = [
  ["an append in clear is as many statements as in a store without a keyring", clearAppendStatements],
  ["refused once the owner has a key check recorded by another store", ownerGivenAKeyElsewhere],
  ["a session registered with an owner later is looked up again", ownerRegisteredLater],
  ["a session created again for another owner is looked up again", sessionGivenAnotherOwner],
];

await describePlaces("a write in clear under a keyring", "clear", cases);
