import assert from "node:assert/strict";
import type { Suite } from "../runner.js";
import { appendChain, type ContractTarget, ids, msg, withStore } from "./harness.js";

/** Byte-budgeted recent history and row stats. */
export function recentSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("recent history and row stats", () => {
    test("row stats list every row of the path with its JSON size", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("u", "hello"));
        await s.appendMessage(msg("a", "é".repeat(100), "assistant"));
        const stats = await s.getHistoryRowStats!();
        assert.deepEqual(
          stats.map((r) => [r.id, r.role]),
          [
            ["u", "user"],
            ["a", "assistant"],
          ],
        );
        assert.equal(stats[0]!.bytes, Buffer.byteLength(JSON.stringify(msg("u", "hello"))));
        assert.equal(
          stats[1]!.bytes,
          Buffer.byteLength(JSON.stringify(msg("a", "é".repeat(100), "assistant"))),
        );
        assert.deepEqual(await s.getHistoryRowStats!("ghost"), []);
      }));

    test("the newest suffix that fits, always the leaf, with the whole path's byte total", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 10);
        const stats = await s.getHistoryRowStats!();
        const total = stats.reduce((sum, r) => sum + r.bytes, 0);
        const three = stats.slice(-3).reduce((sum, r) => sum + r.bytes, 0);
        const window = await s.getRecentHistory!(undefined, three);
        assert.deepEqual(ids(window.messages), ["m7", "m8", "m9"]);
        assert.equal(window.truncated, true);
        assert.equal(window.totalContentBytes, total);
        const tiny = await s.getRecentHistory!(undefined, 1);
        assert.deepEqual(ids(tiny.messages), ["m9"]);
        const floor = await s.getRecentHistory!(undefined, 1, 4);
        assert.deepEqual(ids(floor.messages), ["m6", "m7", "m8", "m9"]);
        const all = await s.getRecentHistory!(undefined, 1, 50);
        assert.equal(all.messages.length, 10);
        assert.equal(all.truncated, false);
        // Floors and budgets no path reaches read everything (Postgres bound them as integers and failed).
        for (const [bytes, floor] of [
          [1, Number.POSITIVE_INFINITY],
          [1, 2 ** 31],
          [2 ** 53, 2 ** 53],
          [Number.POSITIVE_INFINITY, undefined],
        ] as const) {
          assert.equal(
            (await s.getRecentHistory!(undefined, bytes, floor)).messages.length,
            10,
            `${bytes}/${floor}`,
          );
        }
        const fromMiddle = await s.getRecentHistory!("m4", total);
        assert.deepEqual(ids(fromMiddle.messages), ["m0", "m1", "m2", "m3", "m4"]);
        const empty = await s.getRecentHistory!("ghost", 100);
        assert.deepEqual(empty, { messages: [], truncated: false, totalContentBytes: 0 });
        await assert.rejects(s.getRecentHistory!(undefined, -1), { code: "INVALID_ARGUMENT" });
      }));

    test("overlays apply inside the window", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 10);
        const c = await s.addCompaction("sum", "m6", "m7");
        const outside = await s.addCompaction("outside", "m1", "m2");
        const window = await s.getRecentHistory!(undefined, 10_000_000);
        assert.deepEqual(ids(window.messages), [
          "m0",
          `compaction_${outside.id}`,
          "m3",
          "m4",
          "m5",
          `compaction_${c.id}`,
          "m8",
          "m9",
        ]);
        const stats = await s.getHistoryRowStats!();
        const lastFour = stats.slice(-4).reduce((sum, r) => sum + r.bytes, 0);
        assert.deepEqual(ids((await s.getRecentHistory!(undefined, lastFour)).messages), [
          `compaction_${c.id}`,
          "m8",
          "m9",
        ]);
      }));
  });
}
