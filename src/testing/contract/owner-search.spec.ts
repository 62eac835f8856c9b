import assert from "node:assert/strict";
import { MAX_SEARCH_SESSIONS } from "../../search/options.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg } from "./harness.js";
import { withManager } from "./manager-harness.js";

const sorted = (hits: readonly { id: string }[]) => ids(hits).sort();

/**
 * Owner-scoped search at scale and in any order of writes: an owner is kept to inside the store's search index,
 * whatever number of sessions it has and whether its messages were written before its session was registered.
 */
export function ownerSearchSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("Owner search", () => {
    test("an owner with more sessions than a search may name finds its hits, and never another owner's", (t) =>
      withManager(t, target, async (manager) => {
        const count = MAX_SEARCH_SESSIONS + 5;
        const owned: string[] = [];
        for (let i = 0; i < count; i++) {
          owned.push((await manager.create(`alice ${i}`, { owner: "alice", id: `alice-${i}` })).id);
        }
        // The needle in the owner's oldest and newest sessions, and in sessions of another owner and of none.
        await manager.append(owned[0]!, msg("first", "a needle in the oldest session"));
        await manager.append(owned[count - 1]!, msg("last", "a needle in the newest session"));
        const bob = await manager.create("bob's", { owner: "bob" });
        await manager.append(bob.id, msg("bob", "bob keeps a needle too"));
        const nobody = await manager.create("nobody's");
        await manager.append(nobody.id, msg("nobody", "an unowned needle"));
        const view = manager.forOwner("alice");
        for (const match of ["any", "all"] as const) {
          assert.deepEqual(sorted(await view.search("needle", { match })), ["first", "last"], match);
          assert.deepEqual(sorted(await view.search("needle session", { match, branch: "active" })), [
            "first",
            "last",
          ]);
          assert.deepEqual(ids(await manager.search("needle", { match, owner: "bob" })), ["bob"], match);
          assert.deepEqual(ids(await view.search("needle", { match, sessionIds: [bob.id, owned[0]!] })), [
            "first",
          ]);
          assert.deepEqual(ids(await view.search("needle", { match, sessionId: owned[count - 1]! })), [
            "last",
          ]);
          assert.deepEqual(
            ids(await manager.search("needle", { match, owner: "bob", sessionId: owned[0]! })),
            [],
          );
        }
        assert.equal((await manager.search("needle")).length, 4, "unscoped search spans every session");
      }));

    test("an owned session's messages written before and after it was registered are found", (t) =>
      withManager(t, target, async (manager, store) => {
        const early = store.session("early");
        await early.appendMessage(msg("before", "written before the owner was known"));
        await store.session("other").appendMessage(msg("stranger", "written by a stranger before"));
        // A search indexes what is pending first: the first message is in the index without an owner then.
        assert.equal((await manager.search("written before")).length, 2);
        await store.registry.create({ id: "early", name: "early", owner: "alice" });
        await store.registry.create({ id: "other", name: "other", owner: "bob" });
        await early.appendMessage(msg("after", "written after the owner was known"));
        for (const match of ["any", "all"] as const) {
          assert.deepEqual(sorted(await manager.search("written owner", { match, owner: "alice" })), [
            "after",
            "before",
          ]);
          assert.deepEqual(ids(await manager.search("written before", { match, owner: "bob" })), [
            "stranger",
          ]);
          assert.deepEqual(ids(await manager.search("written", { match, owner: "carol" })), []);
        }
      }));

    test("an edited message of an owned session stays the owner's", (t) =>
      withManager(t, target, async (manager) => {
        const alice = await manager.create("alice's", { owner: "alice" });
        await manager.append(alice.id, msg("m1", "the first draft"));
        assert.deepEqual(ids(await manager.search("draft", { owner: "alice" })), ["m1"]);
        await manager.store.session(alice.id).updateMessage(msg("m1", "the final draft"));
        assert.deepEqual(ids(await manager.search("final draft", { owner: "alice", match: "all" })), ["m1"]);
        assert.deepEqual(ids(await manager.search("final", { owner: "bob" })), []);
      }));
  });
}
