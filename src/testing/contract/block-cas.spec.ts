import assert from "node:assert/strict";
import { hasConditionalWrite, hasContextStorage } from "../../contract/context.js";
import type { SessionStore } from "../../contract/store.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, rejectsWithCode, withStore } from "./harness.js";

function blocksOf(store: SessionStore) {
  assert.ok(hasContextStorage(store), `${store.backend} store has blocks`);
  assert.ok(hasConditionalWrite(store.blocks), `${store.backend} blocks have setBlockIf`);
  return store.blocks;
}

/** The conditional block write (compare-and-set) read-modify-write callers build on. */
export function blockCasSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("conditional block writes (setBlockIf)", () => {
    test("writes only over the expected content; null expects no row; answers whether it wrote", () =>
      withStore(target, async (store) => {
        const blocks = blocksOf(store);
        assert.equal(await blocks.setBlockIf("cas", "anything", "x"), false, "absent, a value expected");
        assert.equal(await blocks.getBlock("cas"), null);
        assert.equal(await blocks.setBlockIf("cas", null, "v1"), true);
        assert.equal(await blocks.setBlockIf("cas", null, "again"), false, "present, absence expected");
        assert.equal(await blocks.getBlock("cas"), "v1");
        assert.equal(await blocks.setBlockIf("cas", "v0", "v2"), false, "stale expectation");
        assert.equal(await blocks.getBlock("cas"), "v1");
        assert.equal(await blocks.setBlockIf("cas", "v1", ""), true);
        assert.equal(await blocks.getBlock("cas"), "", "an empty string is a value");
        assert.equal(await blocks.setBlockIf("cas", null, "x"), false, "the empty value is not absence");
        assert.equal(await blocks.setBlockIf("cas", "", "v3"), true);
        assert.equal(await blocks.getBlock("cas"), "v3");
        await blocks.deleteBlocks(["cas"]);
        assert.equal(await blocks.setBlockIf("cas", "v3", "v4"), false, "deleted meanwhile");
        assert.equal(await blocks.setBlockIf("cas", null, "v5"), true);
      }));

    test("compares text every backend stores in another form (U+0000, a lone surrogate, U+FEFF) exactly", () =>
      withStore(target, async (store) => {
        const blocks = blocksOf(store);
        const odd = ["\uFEFFa\u0000b", "half \ud83d", '"quoted"\\'];
        let current: string | null = null;
        for (const next of odd) {
          assert.equal(await blocks.setBlockIf("odd", current, next), true, JSON.stringify(next));
          assert.equal(await blocks.getBlock("odd"), next);
          current = next;
        }
        assert.equal(
          await blocks.setBlockIf("odd", "half \ufffd", "x"),
          false,
          "U+FFFD is not the surrogate",
        );
        assert.equal(await blocks.setBlockIf("odd", "half \ud83d", "x"), false, "an older value");
        assert.equal(await blocks.getBlock("odd"), '"quoted"\\');
      }));

    test("of concurrent writers expecting the same content exactly one wins", () =>
      withStore(target, async (store) => {
        const blocks = blocksOf(store);
        await blocks.setBlock("race", "start");
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) => blocks.setBlockIf("race", "start", `writer ${i}`)),
        );
        assert.equal(results.filter(Boolean).length, 1);
        const winner = results.indexOf(true);
        assert.equal(await blocks.getBlock("race"), `writer ${winner}`);
        const created = await Promise.all(
          Array.from({ length: 8 }, (_, i) => blocks.setBlockIf("fresh", null, `creator ${i}`)),
        );
        assert.equal(created.filter(Boolean).length, 1);
      }));

    test("bad arguments are INVALID_ARGUMENT; a key no row can have is refused, not written", () =>
      withStore(target, async (store) => {
        const blocks = blocksOf(store);
        await rejectsWithCode(blocks.setBlockIf("", null, "x"), "INVALID_ARGUMENT");
        await rejectsWithCode(blocks.setBlockIf("a\u0000b", null, "x"), "INVALID_ARGUMENT");
        await rejectsWithCode(blocks.setBlockIf("k", 42 as unknown as string, "x"), "INVALID_ARGUMENT", {
          path: "expected",
          rule: "type",
        });
        await rejectsWithCode(
          blocks.setBlockIf("k", null, undefined as unknown as string),
          "INVALID_ARGUMENT",
        );
        assert.equal(await blocks.getBlock("k"), null);
      }));
  });
}
