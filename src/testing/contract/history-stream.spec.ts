import assert from "node:assert/strict";
import type { SessionMessage } from "../../contract/message.js";
import type { HistoryReadOptions } from "../../contract/provider.js";
import { Session } from "../../session/session.js";
import type { Suite } from "../runner.js";
import { appendChain, type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";
import { batches, imageMessage, size } from "./history-harness.js";

/**
 * Streaming history reads: `Session.history` / `historyBatches` and the provider's `historyBatches`. How
 * recent-history budgets count media is in recent-budgets.spec.ts.
 */
export function historyStreamSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("streaming history", () => {
    test("batches in path order, bounded by batchSize; newestFirst reverses; Session.history flattens", () =>
      withStore(target, async (store) => {
        const chain = await appendChain(store, "a", 25);
        const got = await batches(store, { batchSize: 10 });
        assert.deepEqual(
          got.map((b) => b.length),
          [10, 10, 5],
        );
        assert.deepEqual(ids(got.flat()), chain);
        const newest = await batches(store, { batchSize: 10, newestFirst: true });
        assert.deepEqual(ids(newest.flat()), [...chain].reverse());
        assert.ok(newest.every((b) => b.length <= 10));
        const flat: string[] = [];
        for await (const m of new Session(store, { sessionId: "a" }).history({ batchSize: 3 }))
          flat.push(m.id);
        assert.deepEqual(flat, chain);
        assert.deepEqual(await batches(store, {}, "empty"), []);
      }));

    test("a message deleted or a session cleared under a running read: CONFLICT, never a path with a hole", () =>
      withStore(target, async (store) => {
        // What a backend has read before the change it may still return; what it returns must be the whole path as
        // it was, or the read ends with CONFLICT.
        const cases: [string, boolean, string[] | "clear"][] = [
          ["up-far", false, ["m20", "m5"]],
          ["up-near", false, ["m6"]],
          ["down-near", true, ["m34", "m33"]],
          ["down-far", true, ["m10"]],
          ["up-clear", false, "clear"],
          ["down-clear", true, "clear"],
        ];
        for (const [sessionId, newestFirst, change] of cases) {
          const chain = await appendChain(store, sessionId, 40);
          const walk = new Session(store, { sessionId }).historyBatches({ batchSize: 5, newestFirst });
          const got: string[] = [];
          const first = await walk.next();
          got.push(...ids(first.value ?? []));
          const s = store.session(sessionId);
          if (change === "clear") await s.clearMessages();
          else await s.deleteMessages(change);
          try {
            for (let next = await walk.next(); !next.done; next = await walk.next())
              got.push(...ids(next.value));
          } catch (error) {
            assert.equal((error as { code?: string }).code, "CONFLICT", `${sessionId}: ${String(error)}`);
            continue;
          }
          assert.deepEqual(
            got,
            newestFirst ? [...chain].reverse() : chain,
            `${sessionId}: a path with a hole`,
          );
        }
      }));

    test("overlays apply exactly as getHistory applies them, in both orders and any batch size", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 12);
        await s.addCompaction("first", "m1", "m3");
        await s.addCompaction("newer wins", "m1", "m4");
        await s.addCompaction("tail", "m8", "m9");
        await s.addCompaction("off the path", "m2", "ghost");
        const expected = ids(await s.getHistory());
        assert.ok(expected.some((id) => id.startsWith("compaction_")));
        for (const batchSize of [1, 2, 3, 100]) {
          assert.deepEqual(
            ids((await batches(store, { batchSize })).flat()),
            expected,
            `batchSize ${batchSize}`,
          );
          const newest = (await batches(store, { batchSize, newestFirst: true })).flat();
          assert.deepEqual(ids(newest), [...expected].reverse(), `newestFirst, batchSize ${batchSize}`);
        }
      }));

    test("leafId reads another branch; an unknown leaf reads nothing", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await appendChain(store, "a", 5);
        await s.appendMessage(msg("b3"), "m2");
        await s.appendMessage(msg("b4"), "b3");
        assert.deepEqual(ids((await batches(store, { batchSize: 2 })).flat()), [
          "m0",
          "m1",
          "m2",
          "b3",
          "b4",
        ]);
        const other = await batches(store, { leafId: "m4", batchSize: 2, newestFirst: true });
        assert.deepEqual(ids(other.flat()), ["m4", "m3", "m2", "m1", "m0"]);
        assert.deepEqual(ids((await batches(store, { leafId: "m1" })).flat()), ["m0", "m1"]);
        assert.deepEqual(await batches(store, { leafId: "ghost" }), []);
        // A leaf id that is no string names no message either (SQLite used to read the latest leaf), also
        // through the provider's own stream and getHistory.
        assert.deepEqual(await batches(store, { leafId: 42 as never }), []);
        if (s.historyBatches) {
          const direct: SessionMessage[][] = [];
          for await (const batch of s.historyBatches({ leafId: {} as never })) direct.push(batch);
          assert.deepEqual(direct, []);
        }
        assert.deepEqual(await s.getHistory(42 as never), []);
      }));

    test("a consumer that stops early gets the newest messages; the read can start again", () =>
      withStore(target, async (store) => {
        await appendChain(store, "a", 30);
        const session = new Session(store, { sessionId: "a" });
        const seen: string[] = [];
        for await (const m of session.history({ newestFirst: true, batchSize: 4 })) {
          seen.push(m.id);
          if (seen.length === 3) break;
        }
        assert.deepEqual(seen, ["m29", "m28", "m27"]);
        assert.equal((await session.getHistory()).length, 30);
      }));

    test("batches stay within maxBatchBytes; a larger message comes alone and whole", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const messages = [
          msg("s0", "x".repeat(100)),
          msg("s1", "x".repeat(300)),
          msg("big", "y".repeat(5000)),
          msg("s2", "x".repeat(200)),
          msg("s3", "x".repeat(50)),
          msg("s4", "x".repeat(400)),
        ];
        for (const m of messages) await s.appendMessage(m);
        const max = 1000;
        for (const newestFirst of [false, true]) {
          const got = await batches(store, { maxBatchBytes: max, batchSize: 3, newestFirst });
          for (const batch of got) {
            assert.ok(batch.length <= 3);
            const bytes = batch.reduce((sum, m) => sum + size(m), 0);
            assert.ok(batch.length === 1 || bytes <= max, `batch ${ids(batch)} has ${bytes} bytes`);
          }
          const big = got.find((b) => b.some((m) => m.id === "big"));
          assert.deepEqual(ids(big ?? []), ["big"]);
          assert.equal(JSON.stringify(big?.[0]), JSON.stringify(messages[2]));
          const order = ids(got.flat());
          assert.deepEqual(newestFirst ? order.reverse() : order, ids(messages));
        }
      }));

    test("bad options are refused; aborting rejects with the signal's reason and stops the read", () =>
      withStore(target, async (store) => {
        await appendChain(store, "a", 10);
        for (const bad of [
          { batchSize: 0 },
          { batchSize: 1.5 },
          { maxBatchBytes: 0 },
          { maxBatchBytes: Number.NaN },
        ]) {
          await rejectsWithCode(batches(store, bad as HistoryReadOptions), "INVALID_ARGUMENT");
        }
        const before = new AbortController();
        before.abort(new Error("stop now"));
        await assert.rejects(batches(store, { signal: before.signal }), /stop now/);
        const during = new AbortController();
        const iterator = new Session(store, { sessionId: "a" })
          .historyBatches({ batchSize: 2, signal: during.signal })
          [Symbol.asyncIterator]();
        assert.deepEqual(ids((await iterator.next()).value ?? []), ["m0", "m1"]);
        during.abort();
        await assert.rejects(iterator.next(), { name: "AbortError" });
        assert.equal((await iterator.next()).done, true);
      }));

    test("split large messages and offloaded media come back whole; media counts as it reads back", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const large = msg("large", "z".repeat(20_000) + "é😀".repeat(3000));
        const image = imageMessage("img", 30_000, 7);
        await s.appendMessage(msg("t0"));
        await s.appendMessage(large);
        await s.appendMessage(image);
        await s.appendMessage(msg("t1"));
        const expected = (await s.getHistory()).map((m) => JSON.stringify(m));
        assert.equal(expected[2], JSON.stringify(image));
        for (const newestFirst of [false, true]) {
          const got = await batches(store, { maxBatchBytes: 10_000, newestFirst });
          const flat = got.flat().map((m) => JSON.stringify(m));
          assert.deepEqual(newestFirst ? flat.reverse() : flat, expected);
          // The image row stores a pointer of ~150 bytes, but reads back as 40 KB: alone in its batch.
          assert.deepEqual(ids(got.find((b) => b.some((m) => m.id === "img")) ?? []), ["img"]);
        }
      }));
  });
}
