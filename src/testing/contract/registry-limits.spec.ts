// What the session registry refuses: input one backend would change or refuse (malformed text, a missing name,
// counts, list bounds and scan page sizes that are not whole numbers in range, a scan source that is not such
// text) and usage additions that would carry a total out of range, each INVALID_ARGUMENT with nothing written;
// additions racing at the edge add exactly those that fit.
import assert from "node:assert/strict";
import type { SessionUsage } from "../../contract/registry.js";
import { SessionManager } from "../../manager/manager.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, rejectsWithCode } from "./harness.js";
import { withRegistryStore } from "./manager-harness.js";

/** The first item of an async iterable (a scan checks its options when it is first read). */
async function firstOf(items: unknown): Promise<unknown> {
  for await (const item of items as AsyncIterable<unknown>) return item;
  return undefined;
}

/** The session registry's input checks and usage-total range; the same on every backend. */
export function registryLimitsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("session registry", () => {
    test("input one backend would change or refuse is INVALID_ARGUMENT on all; nothing is written", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        const reg = registry as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
        const before = await registry.create({ id: "r", name: "kept" });
        const badText = ["a\0b", "a\uD800", "\uDC00", 7, null];
        for (const name of badText) {
          await rejectsWithCode(reg.create!({ id: `n${String(name)}`, name }), "INVALID_ARGUMENT");
          await rejectsWithCode(reg.rename!("r", name), "INVALID_ARGUMENT");
          await rejectsWithCode(reg.markEnded!("r", name), "INVALID_ARGUMENT");
        }
        for (const field of ["model", "source", "parentSessionId"]) {
          await rejectsWithCode(registry.create({ id: "f", name: "x", [field]: "a\0" }), "INVALID_ARGUMENT");
        }
        await rejectsWithCode(reg.create!({ id: "noname" }), "INVALID_ARGUMENT");
        const usage = { inputTokens: 1, outputTokens: 1, cost: 0 };
        for (const bad of [2 ** 53, -(2 ** 63), 0.5, Number.NaN, Number.POSITIVE_INFINITY, "1"]) {
          await rejectsWithCode(reg.addUsage!("r", { ...usage, inputTokens: bad }), "INVALID_ARGUMENT");
          await rejectsWithCode(reg.addUsage!("r", { ...usage, cacheWriteTokens: bad }), "INVALID_ARGUMENT");
        }
        for (const bad of [Number.NaN, Number.NEGATIVE_INFINITY, "1"]) {
          await rejectsWithCode(reg.addUsage!("r", { ...usage, cost: bad }), "INVALID_ARGUMENT");
        }
        for (const bad of [2 ** 53, 0.5, -1, Number.NaN, Number.POSITIVE_INFINITY, "1"]) {
          await rejectsWithCode(reg.list!({ limit: bad }), "INVALID_ARGUMENT");
          await rejectsWithCode(reg.list!({ offset: bad }), "INVALID_ARGUMENT");
        }
        for (const bad of [0, 10_001, 0.5, -1, Number.NaN, "1", null]) {
          await rejectsWithCode(firstOf(reg.scan!({ pageSize: bad })), "INVALID_ARGUMENT");
        }
        // A source no row can hold, or not a string (null too: a missing source is not a source to ask for).
        for (const bad of ["a\0", "a\uD800", 7, null, {}]) {
          await rejectsWithCode(firstOf(reg.scan!({ source: bad })), "INVALID_ARGUMENT");
        }
        await rejectsWithCode(firstOf(reg.scan!(5)), "INVALID_ARGUMENT");
        await rejectsWithCode(reg.addUsage!("r", undefined), "INVALID_ARGUMENT");
        assert.deepEqual(await registry.get("r"), before);
        assert.equal(await registry.count(), 1);
        // The largest exact count is stored and read back exactly; a negative delta corrects a total.
        const max = Number.MAX_SAFE_INTEGER;
        const info = await registry.addUsage("r", { inputTokens: max, outputTokens: 0, cost: 0.5 });
        assert.equal(info?.input_tokens, max);
        const corrected = await registry.addUsage("r", { inputTokens: -max, outputTokens: 0, cost: -0.25 });
        assert.deepEqual([corrected?.input_tokens, corrected?.estimated_cost], [0, 0.25]);
        assert.equal((await registry.list({ limit: max, offset: 0 })).length, 1);
      }));

    test("an addition that would carry a total out of range is INVALID_ARGUMENT and writes nothing", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        const max = Number.MAX_SAFE_INTEGER;
        const none = { inputTokens: 0, outputTokens: 0, cost: 0 };
        await registry.create({ id: "x", name: "extremes" });
        await registry.create({ id: "y", name: "other" });
        const full = await registry.addUsage("x", {
          ...none,
          inputTokens: max,
          cost: 1e308,
          cacheReadTokens: 1,
        });
        // y is the newest activity: a refused addition must not move x up the list.
        await registry.touch("y");
        const refused: [Partial<SessionUsage>, keyof SessionUsage][] = [
          [{ cost: 1e308 }, "cost"],
          [{ inputTokens: 1, outputTokens: 5 }, "inputTokens"],
          [{ cacheReadTokens: max }, "cacheReadTokens"],
        ];
        for (const [delta, path] of refused) {
          await rejectsWithCode(registry.addUsage("x", { ...none, ...delta }), "INVALID_ARGUMENT", {
            path,
            rule: "range",
          });
        }
        await rejectsWithCode(new SessionManager(store).addUsage("x", 1, 0, 1e308), "INVALID_ARGUMENT", {
          path: "inputTokens",
        });
        assert.deepEqual(await registry.get("x"), full, "no counter moved");
        assert.deepEqual(ids(await registry.list()), ["y", "x"], "no activity");
        // Down to the negative edge, and not one past it; additions within range still go through.
        await registry.addUsage("y", { ...none, cacheWriteTokens: -max });
        await rejectsWithCode(registry.addUsage("y", { ...none, cacheWriteTokens: -1 }), "INVALID_ARGUMENT", {
          path: "cacheWriteTokens",
        });
        const back = await registry.addUsage("x", { ...none, inputTokens: -1, cost: -1e308 });
        assert.deepEqual([back?.input_tokens, back?.estimated_cost], [max - 1, 0]);
        // The cost's edge is where IEEE addition overflows: MAX_VALUE + 1 rounds to MAX_VALUE (finite).
        await registry.addUsage("y", { ...none, cost: Number.MAX_VALUE });
        assert.equal((await registry.addUsage("y", { ...none, cost: 1 }))?.estimated_cost, Number.MAX_VALUE);
        await rejectsWithCode(registry.addUsage("y", { ...none, cost: 2 ** 970 }), "INVALID_ARGUMENT");
        await registry.addUsage("y", { ...none, cost: -Number.MAX_VALUE });
        await registry.addUsage("y", { ...none, cost: -Number.MAX_VALUE });
        await rejectsWithCode(registry.addUsage("y", { ...none, cost: -1e308 }), "INVALID_ARGUMENT", {
          path: "cost",
        });
        assert.equal((await registry.get("y"))?.estimated_cost, -Number.MAX_VALUE);
      }));

    test("concurrent additions that fit one at a time but not together: those that fit are added", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        const max = Number.MAX_SAFE_INTEGER;
        await registry.create({ id: "c", name: "concurrent" });
        await registry.addUsage("c", { inputTokens: max - 10, outputTokens: 0, cost: 0 });
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, () =>
            registry.addUsage("c", { inputTokens: 3, outputTokens: 1, cost: 0 }),
          ),
        );
        const added = results.filter((r) => r.status === "fulfilled").length;
        assert.equal(added, 3);
        for (const r of results) {
          if (r.status === "rejected") assert.equal((r.reason as { code?: string }).code, "INVALID_ARGUMENT");
        }
        const info = await registry.get("c");
        assert.deepEqual([info?.input_tokens, info?.output_tokens], [max - 1, 3]);
      }));
  });
}
