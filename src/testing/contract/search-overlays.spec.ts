import assert from "node:assert/strict";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, withStore } from "./harness.js";

/** Which overlay a hit names when a session holds many: the newest that covers it, none off the covered path. */
export function searchOverlaysSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("search among many overlays", () => {
    test("each hit names the newest overlay covering it; a branch off a covered range is not covered", () =>
      withStore(target, async (store) => {
        const s = store.session("o");
        for (let i = 0; i < 66; i++) await s.appendMessage(msg(`m${i}`, `topic note ${i}`));
        // Twenty overlays of three messages each, then a newer one over the first twelve messages.
        const ranges: string[] = [];
        for (let k = 0; k < 20; k++) {
          ranges.push((await s.addCompaction(`summary ${k}`, `m${3 * k}`, `m${3 * k + 2}`)).id);
        }
        const wide = (await s.addCompaction("summary of the start", "m0", "m11")).id;
        // A reply to m4 on a branch of its own: inside no covered stretch of the path.
        await s.appendMessage(msg("b1", "topic on a branch"), "m4");
        const hits = await store.searchMessages("topic", { sessionId: "o", limit: 100 });
        assert.equal(hits.length, 67);
        for (const hit of hits) {
          const i = hit.id === "b1" ? -1 : Number(hit.id.slice(1));
          const expected = i < 0 || i >= 60 ? undefined : i < 12 ? wide : ranges[Math.floor(i / 3)];
          assert.equal(hit.compactedBy, expected, hit.id);
        }
      }));
  });
}
