// How long an offloaded payload lives: a payload is kept while any row points at it and collected with the last
// (a delete, an update that swaps it, clearing a session, deleting a registered session), never while another
// message or session still points at it.
import assert from "node:assert/strict";
import { hasSessionRegistry } from "../../contract/registry.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, withStore } from "./harness.js";
import { assertStored, imageMessage, png, urlOf } from "./media-harness.js";

/** The attachment store's reference counting: payloads dropped with the last row that points at them. */
export function attachmentsLifetimeSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("attachments", () => {
    test("delete keeps a payload while another row points at it and drops it with the last", () =>
      withStore(target, async (store) => {
        const url = png(20_000, 3);
        const a = store.session("a");
        await a.appendMessage(imageMessage("m1", url));
        await a.appendMessage(imageMessage("m2", url));
        await a.appendMessage(msg("m3"));
        await a.deleteMessages(["m1"]);
        await assertStored(store, 1);
        assert.equal(urlOf(await a.getMessage("m2")), url);
        await a.deleteMessages(["m2"]);
        await assertStored(store, 0, 0);
      }));

    test("update swaps payloads: the new one is stored, the old one dropped, a kept one survives", () =>
      withStore(target, async (store) => {
        const one = png(20_000, 4);
        const two = png(20_000, 5);
        const a = store.session("a");
        await a.appendMessage(imageMessage("m1", one));
        await a.updateMessage(imageMessage("m1", one));
        await assertStored(store, 1);
        await a.updateMessage(imageMessage("m1", two));
        await assertStored(store, 1, 20_000);
        assert.equal(urlOf(await a.getMessage("m1")), two);
        await a.updateMessage(msg("m1"));
        await assertStored(store, 0);
      }));

    test("clearing one session keeps the payloads another session still points at", () =>
      withStore(target, async (store) => {
        const shared = png(20_000, 6);
        await store.session("a").appendMessage(imageMessage("m1", shared));
        await store.session("a").appendMessage(imageMessage("m2", png(20_000, 7)));
        await store.session("b").appendMessage(imageMessage("m1", shared));
        await store.session("a").clearMessages();
        await assertStored(store, 1);
        assert.equal(urlOf(await store.session("b").getMessage("m1")), shared);
        await store.session("b").clearMessages();
        await assertStored(store, 0);
      }));

    test("deleting a registered session drops its payloads, not another's", async (t) => {
      await withStore(target, async (store) => {
        if (!hasSessionRegistry(store)) return t.skip("no registry");
        const shared = png(20_000, 8);
        await store.registry.create({ id: "a", name: "a" });
        await store.session("a").appendMessage(imageMessage("m1", shared));
        await store.session("a").appendMessage(imageMessage("m2", png(20_000, 9)));
        await store.session("b").appendMessage(imageMessage("m1", shared));
        await store.registry.delete("a");
        await assertStored(store, 1);
        await store.registry.delete("b");
        await assertStored(store, 0);
      });
    });
  });
}
