import assert from "node:assert/strict";
import type { SessionStore } from "../../contract/store.js";
import type { Suite } from "../runner.js";
import { appendChain, type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

/** Session "a": u → q → a1, and a2 beside a1 under q (a regenerated answer, the tip). */
async function regenerated(store: SessionStore) {
  const s = store.session("a");
  await s.appendMessage(msg("u"));
  await s.appendMessage(msg("q"));
  await s.appendMessage(msg("a1"));
  await s.appendMessage(msg("a2"), "q");
  return s;
}

/** Delete (splice), clear, and the latest leaf after removals. */
export function deleteSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("delete and clear", () => {
    test("deleting a middle message splices: the rest of the path stays reachable", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 5);
        await s.deleteMessages(["m2"]);
        assert.deepEqual(ids(await s.getHistory()), ["m0", "m1", "m3", "m4"]);
        assert.equal(await s.getPathLength(), 4);
        assert.deepEqual(ids(await s.getBranches("m1")), ["m3"]);
        assert.equal(await s.getMessage("m2"), null);
      }));

    test("deleting a chain of neighbours and a root", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 6);
        await s.deleteMessages(["m2", "m3", "m0"]);
        assert.deepEqual(ids(await s.getHistory()), ["m1", "m4", "m5"]);
        assert.equal(await s.getPathLength("m4"), 2);
      }));

    test("deleting a branch point re-attaches both branches", () =>
      withStore(target, async (store) => {
        const s = await regenerated(store);
        await s.deleteMessages(["q"]);
        assert.deepEqual(ids(await s.getBranches("u")), ["a1", "a2"]);
        assert.deepEqual(ids(await s.getHistory("a1")), ["u", "a1"]);
        assert.deepEqual(ids(await s.getHistory()), ["u", "a2"]);
      }));

    test("deleting the latest leaf of a linear history pops to the previous message", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 3);
        await s.deleteMessages(["m2"]);
        assert.equal((await s.getLatestLeaf())?.id, "m1");
        assert.deepEqual(ids(await s.getHistory()), ["m0", "m1"]);
        assert.equal(await s.getPathLength(), 2);
        await s.deleteMessages(["m1", "m0"]);
        assert.equal(await s.getLatestLeaf(), null);
        assert.deepEqual(await s.getHistory(), []);
        await s.appendMessage(msg("fresh"));
        assert.deepEqual(ids(await s.getHistory()), ["fresh"]);
      }));

    test("deleting a regenerated answer brings back the answer it replaced", () =>
      withStore(target, async (store) => {
        const s = await regenerated(store);
        await s.deleteMessages(["a2"]);
        assert.deepEqual(ids(await s.getHistory()), ["u", "q", "a1"]);
        assert.equal((await s.getLatestLeaf())?.id, "a1");
        assert.equal(await s.getPathLength(), 3);
        // A conversation continued below the original answer comes back whole, at its newest leaf.
        await s.appendMessage(msg("q2"));
        await s.appendMessage(msg("a3"), "q");
        await s.deleteMessages(["a3"]);
        assert.deepEqual(ids(await s.getHistory()), ["u", "q", "a1", "q2"]);
      }));

    test('with tip: "ancestor", deleting a regenerated answer keeps its question the tip', () =>
      withStore(target, async (store) => {
        const s = await regenerated(store);
        await s.deleteMessages(["a2"], { tip: "ancestor" });
        assert.deepEqual(ids(await s.getHistory()), ["u", "q"]);
        assert.equal((await s.getLatestLeaf())?.id, "q");
        assert.deepEqual(ids(await s.getBranches("q")), ["a1"]);
        // The next append goes after the tip, beside the older answer, and may expect the tip.
        await s.appendMessage(msg("a3"), undefined, { expectedLeafId: "q" });
        assert.deepEqual(ids(await s.getHistory()), ["u", "q", "a3"]);
        assert.deepEqual(ids(await s.getBranches("q")), ["a1", "a3"]);
        await s.deleteMessages(["a3", "q"], { tip: "ancestor" });
        assert.deepEqual(ids(await s.getHistory()), ["u"]);
        await rejectsWithCode(s.deleteMessages(["u"], { tip: "parent" as "ancestor" }), "INVALID_ARGUMENT");
      }));

    test("deleting the tip of a long branch never switches to a newer side branch", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 3);
        await s.appendMessage(msg("side"), "m0");
        await s.appendMessage(msg("m3"), "m2");
        await s.deleteMessages(["m3"]);
        assert.deepEqual(ids(await s.getHistory()), ["m0", "m1", "m2"]);
      }));

    test("a tip deleted with its ancestors moves below the nearest surviving one, in any order of ids", () =>
      withStore(target, async (store) => {
        for (const [session, order] of [
          ["x", ["m3", "m2"]],
          ["y", ["m2", "m3"]],
        ] as const) {
          const s = store.session(session);
          await appendChain(store, session, 4);
          await s.appendMessage(msg("side"), "m1");
          await s.appendMessage(msg("m4"), "m3");
          await s.deleteMessages(["m4", ...order]);
          // m1 survives; the newest leaf below it is the side branch (never one outside m1's subtree).
          assert.deepEqual(ids(await s.getHistory()), ["m0", "m1", "side"], session);
          assert.equal(await s.getPathLength(), 3, session);
        }
      }));

    test("a deleted root tip leaves an empty path, never another root's; the next append is a new root", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 2);
        await s.appendMessage(msg("q"), null);
        await s.appendMessage(msg("r"));
        await s.deleteMessages(["r", "q"]);
        assert.equal(await s.getLatestLeaf(), null);
        assert.deepEqual(await s.getHistory(), []);
        assert.equal(await s.getPathLength(), 0);
        assert.deepEqual(ids(await s.getHistory("m1")), ["m0", "m1"]);
        await s.appendMessage(msg("fresh"), undefined, { expectedLeafId: null });
        assert.deepEqual(ids(await s.getHistory()), ["fresh"]);
        assert.deepEqual(ids(await s.getHistory("m1")), ["m0", "m1"]);
      }));

    test("unknown ids are ignored; an empty list is a no-op", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 2);
        await s.deleteMessages(["ghost"]);
        await s.deleteMessages([]);
        assert.deepEqual(ids(await s.getHistory()), ["m0", "m1"]);
      }));

    test("overlays whose endpoints were deleted are dropped", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 6);
        await s.addCompaction("first", "m1", "m2");
        await s.addCompaction("second", "m3", "m4");
        await s.deleteMessages(["m2"]);
        const left = await s.getCompactions();
        assert.deepEqual(
          left.map((c) => c.summary),
          ["second"],
        );
        assert.deepEqual(ids(await s.getHistory()).slice(0, 2), ["m0", "m1"]);
      }));

    test("clearMessages empties the session, its overlays and its search hits", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("m0", "zebra crossing"));
        await s.appendMessage(msg("m1", "more zebra"));
        await s.addCompaction("summary", "m0", "m1");
        await s.clearMessages();
        assert.deepEqual(await s.getHistory(), []);
        assert.equal(await s.getPathLength(), 0);
        assert.equal(await s.getLatestLeaf(), null);
        assert.deepEqual(await s.getCompactions(), []);
        assert.deepEqual(await store.searchMessages("zebra"), []);
        await s.appendMessage(msg("m0", "again"));
        assert.deepEqual(ids(await s.getHistory()), ["m0"]);
      }));
  });
}
