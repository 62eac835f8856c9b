import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import type { ChangeEvent } from "../../contract/feed.js";
import { hasFeed } from "../../contract/feed.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import type { SessionManager } from "../../manager/manager.js";
import { eraseSelected, recordEraser, selectForSweep } from "../../store/retention.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, rejectsWithCode } from "./harness.js";
import { withManager } from "./manager-harness.js";

const HOUR = 3_600_000;

/** An owner's session with three messages (one with the word), an overlay and its cached prompt block. */
async function owned(manager: SessionManager, store: RegistryCapableStore, owner: string, tag: string) {
  const info = await manager.create(`${owner} ${tag}`, { owner });
  await manager.append(info.id, msg(`${tag}-1`, `${owner} erasable ${tag}`));
  await manager.append(info.id, msg(`${tag}-2`, "second"));
  await manager.append(info.id, msg(`${tag}-3`, "third"));
  await manager.addCompaction(info.id, `summary of ${owner}`, `${tag}-1`, `${tag}-2`);
  if (hasContextStorage(store))
    await store.blocks.setBlock(`_system_prompt_${info.id}`, `prompt of ${owner}`);
  return info;
}

/** Erasure receipts, isolation between owners, a resumed erasure and retention with two concurrent sweepers. */
export function erasureSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("Erasure and retention", () => {
    test("erase answers a receipt, announces `erased` with ids only, and nothing of the session is found again", (t) =>
      withManager(t, target, async (manager, store) => {
        const info = await owned(manager, store, "alice", "s1");
        const events: ChangeEvent[] = [];
        const stop = hasFeed(store) ? store.subscribe((event) => void events.push(event)) : () => {};
        const receipt = await manager.erase(info.id);
        stop();
        assert.deepEqual(receipt.sessionIds, [info.id]);
        assert.equal(receipt.sessions, 1);
        assert.equal(receipt.messages, 3);
        assert.equal(receipt.compactions, 1);
        assert.equal(receipt.blocks, hasContextStorage(store) ? 1 : 0);
        assert.equal(await manager.get(info.id), null);
        assert.deepEqual(await store.session(info.id).getHistory(), []);
        assert.deepEqual(await manager.search("erasable"), []);
        if (hasContextStorage(store))
          assert.equal(await store.blocks.getBlock(`_system_prompt_${info.id}`), null);
        if (hasFeed(store)) {
          const erased = events.filter((e) => e.type === "erased");
          assert.equal(erased.length, 1);
          assert.deepEqual(Object.keys(erased[0] ?? {}).sort(), ["cursor", "origin", "sessionId", "type"]);
        }
        await rejectsWithCode(manager.erase(info.id), "NOT_FOUND");
        await rejectsWithCode(manager.erase("never-there"), "NOT_FOUND");
      }));

    test("eraseOwner erases that owner's sessions only; the others' stay whole", (t) =>
      withManager(t, target, async (manager, store) => {
        const a1 = await owned(manager, store, "alice", "a1");
        const a2 = await owned(manager, store, "alice", "a2");
        const b1 = await owned(manager, store, "bob", "b1");
        const before = await manager.getHistory(b1.id);
        const receipt = await manager.eraseOwner("alice");
        assert.deepEqual(receipt.sessionIds.sort(), [a1.id, a2.id].sort());
        assert.equal(receipt.sessions, 2);
        assert.equal(receipt.messages, 6);
        assert.equal(receipt.compactions, 2);
        assert.deepEqual(await manager.list({ owner: "alice" }), []);
        assert.deepEqual(await manager.getHistory(b1.id), before);
        assert.equal((await manager.getCompactions(b1.id)).length, 1);
        assert.deepEqual(
          (await manager.search("erasable")).map((hit) => hit.sessionId),
          [b1.id],
        );
        await rejectsWithCode(manager.eraseOwner("alice"), "NOT_FOUND");
        await rejectsWithCode(manager.eraseOwner(""), "INVALID_ARGUMENT", { path: "owner" });
        // The view erases only its owner's sessions: bob's id is NOT_FOUND through alice's view.
        await rejectsWithCode(manager.forOwner("alice").erase(b1.id), "NOT_FOUND");
        assert.equal((await manager.forOwner("bob").eraseAll()).sessions, 1);
      }));

    test("an owner's erasure interrupted after some sessions completes when run again", (t) =>
      withManager(t, target, async (manager, store) => {
        const sessions = [];
        for (const tag of ["c1", "c2", "c3"]) sessions.push(await owned(manager, store, "carol", tag));
        // What an erasure that stopped after the first session leaves: that session gone, the others whole.
        await store.registry.erase?.(sessions[0]?.id ?? "");
        assert.equal((await manager.list({ owner: "carol" })).length, 2);
        const receipt = await manager.eraseOwner("carol");
        assert.equal(receipt.sessions, 2);
        assert.equal(receipt.messages, 6);
        assert.deepEqual(await manager.list({ owner: "carol" }), []);
      }));

    test("retention: two concurrent sweepers erase each expired session once; pinned and newest stay", (t) =>
      withManager(t, target, async (manager, store) => {
        const ids: string[] = [];
        for (const tag of ["r1", "r2", "r3", "r4", "r5"])
          ids.push((await owned(manager, store, "dave", tag)).id);
        const unowned = await manager.create("unowned");
        await manager.pin(ids[0] ?? "");
        assert.equal((await manager.get(ids[0] ?? ""))?.pinned, true);
        const policy = { maxAgeMs: HOUR, keepNewestPerOwner: 1 };
        const now = new Date(Date.now() + 2 * HOUR); // every session is two hours old by this clock
        const progress: number[] = [];
        const other = (await import("../../manager/manager.js")).SessionManager.create(store);
        const [one, two] = await Promise.all([
          manager.sweep(policy, { now, batchSize: 2, onProgress: (p) => progress.push(p.done) }),
          other.sweep(policy, { now, batchSize: 2 }),
        ]);
        const erased = [...one.erased.sessionIds, ...two.erased.sessionIds];
        assert.equal(new Set(erased).size, erased.length, "no session erased twice");
        // r1 pinned, the newest of dave's kept: the other three and the unowned one go.
        assert.equal(erased.length, 4);
        assert.equal(one.erased.messages + two.erased.messages, 9);
        assert.equal(one.skipped + two.skipped, one.candidates + two.candidates - 4);
        assert.ok(progress.length > 0);
        const left = (await manager.list()).map((s) => s.id);
        assert.equal(left.length, 2);
        assert.ok(left.includes(ids[0] ?? ""));
        assert.ok(!left.includes(unowned.id));
        await manager.pin(ids[0] ?? "", false);
        assert.equal("pinned" in ((await manager.get(ids[0] ?? "")) ?? {}), false);
      }));

    test("retention: a selected session that became its owner's newest before its erasure stays", (t) =>
      withManager(t, target, async (manager, store) => {
        const ids: string[] = [];
        for (const tag of ["k1", "k2", "k3"]) ids.push((await owned(manager, store, "erin", tag)).id);
        const [k1, k2, k3] = ids as [string, string, string];
        const now = new Date(Date.now() + 2 * HOUR);
        const selection = await selectForSweep(
          store.registry,
          { maxAgeMs: HOUR, keepNewestPerOwner: 1 },
          { now },
        );
        assert.deepEqual(selection.candidates.map((s) => s.id).sort(), [k1, k2].sort());
        // What another sweeper of another policy (or a caller) does between this one's read and its erasures.
        await manager.erase(k3);
        const { registry } = store;
        assert.ok(registry.erase, "a store with a registry can erase");
        const report = await eraseSelected(selection, recordEraser(registry.erase.bind(registry)));
        assert.deepEqual(report.erased.sessionIds, [k1]);
        assert.equal(report.skipped, 1);
        assert.deepEqual(
          (await manager.list({ owner: "erin" })).map((s) => s.id),
          [k2],
        );
      }));

    test("bad retention policies are INVALID_ARGUMENT naming the field", (t) =>
      withManager(t, target, async (manager) => {
        for (const [policy, path, rule] of [
          [{}, "maxAgeMs", "required"],
          [{ maxAgeMs: -1 }, "maxAgeMs", "range"],
          [{ maxAgeMs: Number.POSITIVE_INFINITY }, "maxAgeMs", "range"],
          [{ maxAgeMs: Number.NaN }, "maxAgeMs", "range"],
          [{ maxAgeMs: 1, keepNewestPerOwner: -1 }, "keepNewestPerOwner", "range"],
          [{ maxAgeMs: 1, keepNewestPerOwner: 1.5 }, "keepNewestPerOwner", "range"],
          [null, "", "type"],
        ] as const) {
          await rejectsWithCode(manager.sweep(policy as never), "INVALID_ARGUMENT", { path, rule });
        }
        await rejectsWithCode(manager.pin("never-there"), "NOT_FOUND");
      }));
  });
}
