import { hasContextStorage } from "../../contract/context.js";
import { hasSessionRegistry } from "../../contract/registry.js";
import { hasTransfer } from "../../contract/transfer.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, rejectsWithCode, withStore } from "./harness.js";

/** A closed store refuses every later call with `CLOSED`, on every backend (never a driver's `STORAGE` error). */
export function closedSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("after close()", () => {
    test("every call of a closed store and of its providers is CLOSED; close() again is a no-op", () =>
      withStore(target, async (store) => {
        const s = store.session("s");
        await s.appendMessage(msg("m1"));
        await store.close();
        await store.close();
        await rejectsWithCode(s.appendMessage(msg("m2")), "CLOSED");
        await rejectsWithCode(s.getHistory(), "CLOSED");
        await rejectsWithCode(s.getMessage("m1"), "CLOSED");
        await rejectsWithCode(s.getLatestLeaf(), "CLOSED");
        await rejectsWithCode(s.addCompaction("sum", "m1", "m1"), "CLOSED");
        await rejectsWithCode(store.searchMessages("text"), "CLOSED");
        await rejectsWithCode((async () => store.session("other").getHistory())(), "CLOSED");
        if (hasContextStorage(store)) {
          await rejectsWithCode(store.blocks.getBlock("k"), "CLOSED");
          await rejectsWithCode(store.blocks.setBlock("k", "v"), "CLOSED");
          await rejectsWithCode(store.entries.setEntry("kb", "k", "v"), "CLOSED");
          await rejectsWithCode(store.entries.searchEntries("kb", "v"), "CLOSED");
        }
        if (hasSessionRegistry(store)) {
          await rejectsWithCode(store.registry.create({ id: "x", name: "x" }), "CLOSED");
          await rejectsWithCode(store.registry.list(), "CLOSED");
          await rejectsWithCode(store.registry.scan()[Symbol.asyncIterator]().next(), "CLOSED");
        }
        if (hasTransfer(store)) {
          const items = store.transfer.exportSession("s")[Symbol.asyncIterator]();
          await rejectsWithCode(items.next(), "CLOSED");
        }
      }));
  });
}
