import assert from "node:assert/strict";
import { estimateMessageTokens } from "../../message/tokens.js";
import type { Suite } from "../runner.js";
import { appendChain, type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

/** Compaction overlay storage and how getHistory applies overlays. */
export function overlaysSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("compaction overlays", () => {
    test("an overlay replaces its range with one synthetic assistant message", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 6);
        const stored = await s.addCompaction("the summary", "m1", "m3", {
          tokensBefore: 40,
          tokensAfter: 10,
        });
        assert.match(stored.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
        assert.deepEqual(stored.details, { tokensBefore: 40, tokensAfter: 10 });
        const history = await s.getHistory();
        assert.deepEqual(ids(history), ["m0", `compaction_${stored.id}`, "m4", "m5"]);
        const overlay = history[1]!;
        assert.equal(overlay.role, "assistant");
        assert.deepEqual(overlay.parts, [{ type: "text", text: "the summary" }]);
        assert.equal(overlay.createdAt?.toISOString(), new Date(stored.createdAt).toISOString());
        const [listed] = await s.getCompactions();
        assert.deepEqual(listed, stored);
      }));

    test("details JSON cannot hold are INVALID_ARGUMENT, and nothing is stored", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 2);
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        for (const details of [cyclic, { big: 1n }, () => 1]) {
          await rejectsWithCode(
            Promise.resolve().then(() => s.addCompaction("sum", "m0", "m1", details as never)),
            "INVALID_ARGUMENT",
            { path: "details" },
          );
        }
        assert.deepEqual(await s.getCompactions(), []);
      }));

    test("originals stay visible to path length, getMessage, getBranches and search", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 4);
        await s.updateMessage(msg("m2", "the hidden walrus"));
        await s.addCompaction("summary", "m1", "m2");
        assert.equal(await s.getPathLength(), 4);
        assert.equal((await s.getMessage("m2"))?.parts[0]?.text, "the hidden walrus");
        assert.deepEqual(ids(await s.getBranches("m1")), ["m2"]);
        assert.deepEqual(ids(await store.searchMessages("walrus")), ["m2"]);
      }));

    test("a newer overlay with the same start supersedes the older; both rows are kept", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 8);
        await s.addCompaction("first", "m1", "m3");
        const second = await s.addCompaction("second", "m1", "m5");
        assert.deepEqual(ids(await s.getHistory()), ["m0", `compaction_${second.id}`, "m6", "m7"]);
        assert.equal((await s.getCompactions()).length, 2);
        const third = await s.addCompaction("third, shorter but newest", "m1", "m2");
        assert.deepEqual(ids(await s.getHistory()), [
          "m0",
          `compaction_${third.id}`,
          "m3",
          "m4",
          "m5",
          "m6",
          "m7",
        ]);
      }));

    test("an overlay starting inside a replaced range is ignored; disjoint overlays both apply", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 10);
        const a = await s.addCompaction("A", "m1", "m4");
        await s.addCompaction("B", "m3", "m6");
        const c = await s.addCompaction("C", "m7", "m8");
        assert.deepEqual(ids(await s.getHistory()), [
          "m0",
          `compaction_${a.id}`,
          "m5",
          "m6",
          `compaction_${c.id}`,
          "m9",
        ]);
      }));

    test("overlays off the path, reversed or unknown never apply", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 5);
        await s.addCompaction("reversed", "m3", "m1");
        await s.addCompaction("unknown", "ghost", "m2");
        await s.addCompaction("unknown end", "m1", "ghost");
        assert.deepEqual(ids(await s.getHistory()), ["m0", "m1", "m2", "m3", "m4"]);
      }));

    test("sibling branches keep their own overlays", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 3);
        await s.appendMessage(msg("x3"), "m2");
        await s.appendMessage(msg("x4"));
        await s.appendMessage(msg("y3"), "m2");
        await s.appendMessage(msg("y4"));
        const onX = await s.addCompaction("x summary", "m1", "x3");
        const onY = await s.addCompaction("y summary", "m0", "y3");
        assert.deepEqual(ids(await s.getHistory("x4")), ["m0", `compaction_${onX.id}`, "x4"]);
        assert.deepEqual(ids(await s.getHistory("y4")), [`compaction_${onY.id}`, "y4"]);
      }));

    test("getContextTokens equals a full re-estimate of getHistory, with overlays, branches, updates, deletes", () =>
      withStore(target, async (store) => {
        const s = store.session("tok");
        // Every built-in backend keeps running totals; a missing method must fail here, not pass silently.
        assert.equal(typeof s.getContextTokens, "function", `${store.backend} provides getContextTokens`);
        const check = async (leaf?: string) =>
          assert.equal(
            await s.getContextTokens!(leaf),
            estimateMessageTokens(await s.getHistory(leaf)),
            `leaf ${leaf}`,
          );
        await check();
        for (let i = 0; i < 12; i++) await s.appendMessage(msg(`t${i}`, "word ".repeat(i * 7 + 1)));
        await s.appendMessage(msg("side", "a side branch with several words"), "t5");
        await check();
        await check("t11");
        await s.addCompaction("first summary of things", "t2", "t6");
        await s.addCompaction("newer, longer summary of many more things", "t2", "t8");
        await s.addCompaction("second range", "t9", "t10");
        await check("t11");
        await check("side");
        await s.updateMessage(msg("t4", "rewritten ".repeat(30)));
        await s.updateMessage(msg("t11", "short"));
        await check("t11");
        await s.deleteMessages(["t3", "t10"]);
        await check("t11");
        await check("side");
        assert.equal(await s.getContextTokens!("ghost"), 0);
      }));

    test("history through an overlay on a long path returns head, summary and tail", () =>
      withStore(target, async (store) => {
        const s = store.session("long");
        for (let i = 0; i < 1200; i++) await s.appendMessage(msg(`l${i}`));
        const c = await s.addCompaction("long summary", "l3", "l999");
        const history = await s.getHistory();
        assert.equal(history.length, 3 + 1 + 200);
        assert.deepEqual(ids(history.slice(0, 5)), ["l0", "l1", "l2", `compaction_${c.id}`, "l1000"]);
        assert.equal(history.at(-1)?.id, "l1199");
        assert.deepEqual(ids(await s.getHistory("l500")), ids((await s.getHistory("l500")).slice()));
        assert.equal((await s.getHistory("l500")).length, 501);
      }));
  });
}
