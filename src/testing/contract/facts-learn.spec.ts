// What a learner reads and holds through `store.facts`: a session's messages after a mark in store order, a page
// at a time, and the lease that keeps one learner per session (across store instances where the target reopens).
import assert from "node:assert/strict";
import { hasFactStore } from "../../contract/facts.js";
import type { SessionMessage } from "../../contract/message.js";
import type { Suite } from "../runner.js";
import { withFacts } from "./facts-harness.js";
import { type ContractTarget, msg, rejectsWithCode } from "./harness.js";

/** The learner's reads and lease. */
export function factsLearnSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("facts: what a learner reads and holds", () => {
    test("unlearned reads a session's messages after a mark in store order, text parts joined", (t) =>
      withFacts(t, target, async (store) => {
        const s = store.session("s");
        await s.appendMessage(msg("u1", "I moved to Boston"));
        await store.session("other").appendMessage(msg("x1", "not this session's"));
        const twoParts: SessionMessage = {
          id: "a1",
          role: "assistant",
          parts: [
            { type: "text", text: "Nice." },
            { type: "reasoning", text: "hidden" } as never,
            { type: "text", text: "When?" },
          ],
        };
        await s.appendMessage(twoParts);
        await s.appendMessage(msg("u2", "In May"));
        await s.appendMessage(msg("u3", "With my sister"));
        const first = await store.facts.unlearned("s", 0, 2);
        assert.deepEqual(
          first.map((m) => [m.id, m.role, m.text]),
          [
            ["u1", "user", "I moved to Boston"],
            ["a1", "assistant", "Nice.\nWhen?"],
          ],
        );
        assert.ok((first[0]?.seq ?? 0) > 0 && (first[1]?.seq ?? 0) > (first[0]?.seq ?? 0));
        assert.equal(typeof first[0]?.createdAt, "number");
        const rest = await store.facts.unlearned("s", first[1]?.seq ?? 0, 10);
        assert.deepEqual(
          rest.map((m) => m.id),
          ["u2", "u3"],
        );
        assert.deepEqual(await store.facts.unlearned("s", rest[1]?.seq ?? 0, 10), []);
        assert.deepEqual(await store.facts.unlearned("never", 0, 10), []);
        await rejectsWithCode(store.facts.unlearned("s", 0, 0), "INVALID_ARGUMENT", { path: "limit" });
        await rejectsWithCode(store.facts.unlearned("s", -1, 10), "INVALID_ARGUMENT", { path: "after" });
      }));

    test("one learner holds a session at a time; the mark moves only for the holder", (t) =>
      withFacts(t, target, async (store) => {
        const f = store.facts;
        assert.equal(await f.mark("s"), null);
        assert.deepEqual(await f.claim("s", "A", 1000, 2000), {
          through: 0,
          holder: "A",
          leaseUntil: 2000,
          failures: 0,
        });
        assert.equal(await f.claim("s", "B", 1500, 2500), null, "A's lease runs");
        assert.equal(await f.advance("s", "B", 9, 0), false, "B holds nothing");
        assert.equal(await f.advance("s", "A", 7, 1), true);
        assert.deepEqual(await f.mark("s"), { through: 7, holder: "A", leaseUntil: 2000, failures: 1 });
        assert.equal((await f.claim("s", "A", 1900, 3000))?.leaseUntil, 3000, "the holder renews");
        await f.release("s", "B");
        assert.equal((await f.mark("s"))?.holder, "A", "a release by another changes nothing");
        await f.release("s", "A");
        assert.equal((await f.mark("s"))?.holder, null);
        assert.deepEqual(await f.claim("s", "B", 1950, 4000), {
          through: 7,
          holder: "B",
          leaseUntil: 4000,
          failures: 1,
        });
        assert.equal(
          await f.claim("s", "A", 4001, 5000).then((m) => m?.holder),
          "A",
          "an expired lease is taken",
        );
        assert.equal(await f.advance("s", "B", 8, 0), false, "the lapsed holder's advance is refused");
        assert.equal((await f.mark("s"))?.through, 7);
        assert.equal(await f.mark("other"), null, "a mark is per session");
        await rejectsWithCode(f.claim("s", "", 1, 2), "INVALID_ARGUMENT", { path: "holder" });
        await rejectsWithCode(f.advance("s", "A", -1, 0), "INVALID_ARGUMENT", { path: "through" });
      }));

    test("a lease and a mark hold across store instances", async (t) => {
      const reopen = target.reopen;
      if (!reopen) return t.skip("no reopen: an in-process store");
      let store = await target.create();
      try {
        if (!hasFactStore(store)) return t.skip("no fact store");
        await store.facts.claim("s", "first-process", 1000, 10_000);
        await store.facts.advance("s", "first-process", 3, 0);
        store = await reopen(store);
        if (!hasFactStore(store)) throw new Error("the reopened store has no facts");
        assert.equal(await store.facts.claim("s", "second-process", 2000, 20_000), null);
        assert.deepEqual(await store.facts.mark("s"), {
          through: 3,
          holder: "first-process",
          leaseUntil: 10_000,
          failures: 0,
        });
        assert.equal((await store.facts.claim("s", "second-process", 10_001, 20_000))?.through, 3);
        assert.equal(await store.facts.advance("s", "first-process", 4, 0), false);
      } finally {
        if (target.destroy) await target.destroy(store);
        else await store.close();
      }
    });
  });
}
