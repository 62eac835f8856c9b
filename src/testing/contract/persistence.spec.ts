import assert from "node:assert/strict";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg } from "./harness.js";

/** A reopened store keeps everything (only for targets that can reopen). */
export function persistenceSpec({ describe, test }: Suite, target: ContractTarget): void {
  const reopen = target.reopen;
  if (!reopen) return;
  describe("persistence", () => {
    test("a reopened store keeps messages, tree, overlays and the search index", async () => {
      let store = await target.create();
      try {
        const s = store.session("p");
        await s.appendMessage(msg("u", "persistent platypus"));
        await s.appendMessage(msg("a1", "first", "assistant"));
        await s.appendMessage(msg("a2", "second", "assistant"), "u");
        await s.appendMessage(msg("u2", "follow-up"));
        const c = await s.addCompaction("sum", "a2", "a2");
        store = await reopen(store);
        const again = store.session("p");
        assert.equal((await again.getLatestLeaf())?.id, "u2");
        assert.deepEqual(ids(await again.getHistory()), ["u", `compaction_${c.id}`, "u2"]);
        assert.deepEqual(ids(await again.getBranches("u")), ["a1", "a2"]);
        assert.deepEqual(ids(await store.searchMessages("platypus")), ["u"]);
        await again.appendMessage(msg("u3"));
        assert.equal(await again.getPathLength(), 4);
      } finally {
        if (target.destroy) await target.destroy(store);
        else await store.close();
      }
    });
  });
}
