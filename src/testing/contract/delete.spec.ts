import assert from "node:assert/strict";
import type { Suite } from "../runner.js";
import { appendChain, type ContractTarget, ids, msg, withStore } from "./harness.js";

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
        const s = store.session("a");
        await s.appendMessage(msg("u"));
        await s.appendMessage(msg("q"));
        await s.appendMessage(msg("a1"));
        await s.appendMessage(msg("a2"), "q");
        await s.deleteMessages(["q"]);
        assert.deepEqual(ids(await s.getBranches("u")), ["a1", "a2"]);
        assert.deepEqual(ids(await s.getHistory("a1")), ["u", "a1"]);
        assert.deepEqual(ids(await s.getHistory()), ["u", "a2"]);
      }));

    test("deleting the latest leaf moves the tip to the newest remaining leaf", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 3);
        await s.appendMessage(msg("b"), "m0");
        await s.deleteMessages(["b"]);
        assert.equal((await s.getLatestLeaf())?.id, "m2");
        await s.deleteMessages(["m2", "m1", "m0"]);
        assert.equal(await s.getLatestLeaf(), null);
        assert.deepEqual(await s.getHistory(), []);
        await s.appendMessage(msg("fresh"));
        assert.deepEqual(ids(await s.getHistory()), ["fresh"]);
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
