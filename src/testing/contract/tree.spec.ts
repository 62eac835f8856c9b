import assert from "node:assert/strict";
import type { Suite } from "../runner.js";
import { appendChain, type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

/** Parent semantics, branching, latest leaf, deep paths, isolation, optimistic appends. */
export function treeSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("tree", () => {
    test("omitted parent = after the latest leaf; null = a new root; a string = that parent", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("r1"));
        await s.appendMessage(msg("c1"));
        await s.appendMessage(msg("r2"), null);
        assert.deepEqual(ids(await s.getHistory()), ["r2"]);
        await s.appendMessage(msg("c2"));
        assert.deepEqual(ids(await s.getHistory()), ["r2", "c2"]);
        await s.appendMessage(msg("c1b"), "c1");
        assert.deepEqual(ids(await s.getHistory()), ["r1", "c1", "c1b"]);
        assert.deepEqual(ids(await s.getHistory("c2")), ["r2", "c2"]);
      }));

    test("an unknown parent is PARENT_NOT_FOUND and nothing is stored", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("m0"));
        await rejectsWithCode(s.appendMessage(msg("m1"), "ghost"), "PARENT_NOT_FOUND");
        assert.equal(await s.getMessage("m1"), null);
        assert.equal((await s.getLatestLeaf())?.id, "m0");
      }));

    test("a parent from another session is PARENT_NOT_FOUND", () =>
      withStore(target, async (store) => {
        await store.session("a").appendMessage(msg("pa"));
        await rejectsWithCode(store.session("b").appendMessage(msg("x"), "pa"), "PARENT_NOT_FOUND");
      }));

    test("regenerate: two branches under one user message", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("u1", "question"));
        await s.appendMessage(msg("a1", "first answer", "assistant"));
        await s.appendMessage(msg("a2", "second answer", "assistant"), "u1");
        assert.deepEqual(ids(await s.getBranches("u1")), ["a1", "a2"]);
        assert.equal((await s.getLatestLeaf())?.id, "a2");
        assert.deepEqual(ids(await s.getHistory()), ["u1", "a2"]);
        assert.deepEqual(ids(await s.getHistory("a1")), ["u1", "a1"]);
        assert.equal(await s.getPathLength("a1"), 2);
        assert.deepEqual(await s.getBranches("a1"), []);
      }));

    test("the latest leaf is the newest childless message, also when appending onto an old branch", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 5);
        await s.appendMessage(msg("side"), "m1");
        assert.equal((await s.getLatestLeaf())?.id, "side");
        await s.appendMessage(msg("m5"), "m4");
        assert.equal((await s.getLatestLeaf())?.id, "m5");
        assert.deepEqual(ids(await s.getHistory()), ["m0", "m1", "m2", "m3", "m4", "m5"]);
      }));

    test("getHistory(anyId) is the path from the root to that message", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 6);
        assert.deepEqual(ids(await s.getHistory("m2")), ["m0", "m1", "m2"]);
        assert.equal(await s.getPathLength("m2"), 3);
        assert.deepEqual(await s.getHistory("nope"), []);
        assert.equal(await s.getPathLength("nope"), 0);
      }));

    test("a 10,000-message path reads whole and in order", () =>
      withStore(target, async (store) => {
        const s = store.session("deep");
        for (let i = 0; i < 10_000; i++) await s.appendMessage(msg(`d${i}`, `message number ${i}`));
        const history = await s.getHistory();
        assert.equal(history.length, 10_000);
        assert.equal(history[0]?.id, "d0");
        assert.equal(history[9_999]?.id, "d9999");
        assert.ok(history.every((m, i) => m.id === `d${i}`));
        assert.equal(await s.getPathLength(), 10_000);
        assert.equal(await s.getPathLength("d4999"), 5_000);
        assert.equal((await s.getHistory("d4999")).length, 5_000);
      }));

    test("sessions are isolated: same ids in two sessions, clear one, the other stays", () =>
      withStore(target, async (store) => {
        const a = store.session("a");
        const b = store.session("b");
        await a.appendMessage(msg("m", "in a"));
        await b.appendMessage(msg("m", "in b"));
        await a.appendMessage(msg("n"));
        assert.equal((await a.getMessage("m"))?.parts[0]?.text, "in a");
        assert.equal((await b.getMessage("m"))?.parts[0]?.text, "in b");
        assert.deepEqual(ids(await b.getHistory()), ["m"]);
        await a.addCompaction("sum", "m", "n");
        assert.equal((await b.getCompactions()).length, 0);
        await a.clearMessages();
        assert.deepEqual(await a.getHistory(), []);
        assert.deepEqual(await a.getCompactions(), []);
        assert.deepEqual(ids(await b.getHistory()), ["m"]);
        const unnamed = store.session("");
        await unnamed.appendMessage(msg("m", "default session"));
        assert.equal((await unnamed.getMessage("m"))?.parts[0]?.text, "default session");
      }));

    test("expectedLeafId: appends only when the branch has not moved", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("m0"), undefined, { expectedLeafId: null });
        await rejectsWithCode(s.appendMessage(msg("x"), undefined, { expectedLeafId: null }), "CONFLICT");
        await s.appendMessage(msg("m1"), undefined, { expectedLeafId: "m0" });
        await rejectsWithCode(s.appendMessage(msg("m2"), undefined, { expectedLeafId: "m0" }), "CONFLICT");
        assert.deepEqual(ids(await s.getHistory()), ["m0", "m1"]);
      }));

    test("a retried append of a stored id is { inserted: false }, even if its parent or expected leaf is stale", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("m0"));
        await s.appendMessage(msg("m1"), "m0", { expectedLeafId: "m0" });
        // The retry sees the leaf it moved itself, and a parent deleted since: still no error, nothing written.
        assert.equal((await s.appendMessage(msg("m1"), "m0", { expectedLeafId: "m0" }))?.inserted, false);
        await s.appendMessage(msg("m2"));
        await s.deleteMessages(["m0"]);
        assert.equal((await s.appendMessage(msg("m1"), "m0"))?.inserted, false);
        assert.equal(
          (await s.appendMessage(msg("m2"), undefined, { expectedLeafId: null }))?.inserted,
          false,
        );
        assert.deepEqual(ids(await s.getHistory()), ["m1", "m2"]);
        await rejectsWithCode(s.appendMessage(msg("m3"), "m0"), "PARENT_NOT_FOUND");
      }));
  });
}
