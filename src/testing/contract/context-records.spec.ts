import assert from "node:assert/strict";
import {
  type ContextCapableStore,
  hasContextStorage,
  hasRecords,
  type RecordedBlockStore,
} from "../../contract/context.js";
import { hasSessionRegistry, type RegistryCapableStore } from "../../contract/registry.js";
import type { SessionStore } from "../../contract/store.js";
import { hasTransfer, type TransferRow } from "../../contract/transfer.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, rejectsWithCode, toAsync, withStore } from "./harness.js";

type Recorded = ContextCapableStore & RegistryCapableStore & { readonly blocks: RecordedBlockStore };

// A store with records and a registry, or a reason to skip.
function recorded(store: SessionStore): Recorded | string {
  if (!hasContextStorage(store) || !hasRecords(store.blocks)) return "this store keeps no context records";
  if (!hasSessionRegistry(store)) return "this store has no session registry";
  return store as Recorded;
}

/**
 * Whose a block or entry is, by record (contract/context.ts ContextRecord): kept from the first recorded write,
 * listed and removed by it, and removed with its session by erase and delete whatever the key; a key listed by
 * label never removes another session's or an owner's row.
 */
export function contextRecordsSpec({ describe, test }: Suite, target: ContractTarget): void {
  const run = (body: (store: Recorded) => Promise<void>) => (t: { skip(reason: string): void }) =>
    withStore(target, async (store) => {
      const checked = recorded(store);
      if (typeof checked === "string") return t.skip(checked);
      await body(checked);
    });

  describe("context records", () => {
    test(
      "the first recorded write decides a row's record; later writes keep it",
      run(async (store) => {
        const { blocks } = store;
        await blocks.setBlock("memory_s1", "one", { sessionId: "s1" });
        await blocks.setBlock("memory_s1", "two");
        await blocks.setBlock("memory_s1", "three", { owner: "mallory" });
        assert.equal(await blocks.getBlock("memory_s1"), "three");
        assert.deepEqual(await blocks.recordedKeys({ sessionId: "s1" }), ["memory_s1"]);
        assert.deepEqual(await blocks.recordedKeys({ owner: "mallory" }), []);
        await blocks.setBlock("plain", "no record");
        await blocks.setBlock("plain", "claimed", { owner: "olga" });
        assert.deepEqual(
          await blocks.recordedKeys({ owner: "olga" }),
          ["plain"],
          "an unrecorded row takes one",
        );
        assert.equal(await blocks.setBlockIf?.("cas_s1", null, "x", { sessionId: "s1" }), true);
        assert.deepEqual(await blocks.recordedKeys({ sessionId: "s1" }), ["cas_s1", "memory_s1"]);
        await rejectsWithCode(blocks.setBlock("k", "v", { sessionId: "" }), "INVALID_ARGUMENT");
        await rejectsWithCode(blocks.setBlock("k", "v", { owner: "a\u0000b" }), "INVALID_ARGUMENT");
        await rejectsWithCode(
          blocks.setBlock("k", "v", { sessionId: "s", owner: "o" } as never),
          "INVALID_ARGUMENT",
        );
        await rejectsWithCode(store.entries.setEntry("kb", "k", "v", {} as never), "INVALID_ARGUMENT");
        assert.equal(await blocks.getBlock("k"), null, "nothing written");
      }),
    );

    test(
      "deleteRecorded removes an owner's blocks and entries, nothing else",
      run(async (store) => {
        const { blocks, entries } = store;
        await blocks.setBlock("profile_bob", "bob's", { owner: "bob" });
        await blocks.setBlock("memory_bob", "session bob's", { sessionId: "bob" });
        await entries.setEntry("kb", "b", "bob's entry", { owner: "bob" });
        await entries.setEntry("kb", "c", "carol's entry", { owner: "carol" });
        assert.deepEqual(await blocks.deleteRecorded({ owner: "bob" }), { blocks: 1, entries: 1 });
        assert.equal(await blocks.getBlock("profile_bob"), null);
        assert.equal(await blocks.getBlock("memory_bob"), "session bob's");
        assert.deepEqual(
          (await entries.searchEntries("kb", "entry")).map((hit) => hit.key),
          ["c"],
        );
      }),
    );

    test(
      "erase and delete remove a session's recorded rows whatever their key, and no row recorded for another",
      run(async (store) => {
        const { blocks, entries, registry } = store;
        for (const id of ["s1", "s2"]) {
          await registry.create({ id, name: id });
          await store.session(id).appendMessage(msg(`${id}-m`));
        }
        await blocks.setBlock("anything-at-all", "s1's", { sessionId: "s1" });
        await blocks.setBlock("memory_s1", "unrecorded, named by the caller's keys");
        await blocks.setBlock("notes_s1", "s2's, though its key names s1", { sessionId: "s2" });
        await blocks.setBlock("profile_s1", "owner s1's", { owner: "s1" });
        await entries.setEntry("kb", "e1", "s1's entry", { sessionId: "s1" });
        const keys = ["memory_s1", "notes_s1", "profile_s1"];
        const counts = await registry.erase?.("s1", { blockKeys: keys });
        if (counts !== undefined) {
          assert.equal(counts?.blocks, 2);
          assert.equal(counts?.entries, 1);
          assert.equal(await blocks.getBlock("anything-at-all"), null);
          assert.equal(await blocks.getBlock("memory_s1"), null);
          assert.equal(await blocks.getBlock("notes_s1"), "s2's, though its key names s1");
          assert.equal(await blocks.getBlock("profile_s1"), "owner s1's");
          assert.equal(await entries.countEntries("kb"), 0);
        }
        await blocks.setBlock("scratch", "s2's scratch", { sessionId: "s2" });
        await entries.setEntry("kb", "e2", "s2's entry", { sessionId: "s2" });
        assert.equal(await registry.delete("s2", { blockKeys: ["profile_s1"] }), true);
        assert.deepEqual(await blocks.recordedKeys({ sessionId: "s2" }), []);
        assert.equal(await entries.countEntries("kb"), 0);
        assert.equal(await blocks.getBlock("profile_s1"), "owner s1's");
      }),
    );

    test(
      "export carries each row's record and import keeps it, or gives the legacy rule's",
      run(async (store) => {
        if (!hasTransfer(store)) return;
        await store.registry.create({ id: "s1", name: "s1", owner: "ann" });
        await store.blocks.setBlock("a_x", "session s1's under any key", { sessionId: "s1" });
        await store.entries.setEntry("kb", "k", "ann's", { owner: "ann" });
        const rows: TransferRow[] = [];
        for await (const row of store.transfer.exportRows()) rows.push(row);
        assert.deepEqual(rows, [
          { kind: "block", key: "a_x", content: "session s1's under any key", sessionId: "s1" },
          { kind: "entry", label: "kb", key: "k", content: "ann's", owner: "ann" },
        ]);
        await store.blocks.deleteRecorded({ sessionId: "s1" });
        await store.blocks.deleteRecorded({ owner: "ann" });
        const legacy: TransferRow[] = [
          { kind: "block", key: "memory_s1", content: "the rule: s1's" },
          { kind: "block", key: "profile_ann", content: "an owner's name: none" },
          { kind: "block", key: "_memories_owner_ann", content: "the owner's directory" },
        ];
        await store.transfer.importRows(toAsync([...rows, ...legacy]));
        assert.deepEqual(await store.blocks.recordedKeys({ sessionId: "s1" }), ["a_x", "memory_s1"]);
        assert.deepEqual(await store.blocks.recordedKeys({ owner: "ann" }), ["_memories_owner_ann"]);
        assert.deepEqual(await store.blocks.deleteRecorded({ owner: "ann" }), { blocks: 1, entries: 1 });
        assert.equal(await store.blocks.getBlock("profile_ann"), "an owner's name: none");
      }),
    );
  });
}
