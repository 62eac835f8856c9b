// Kept streams (`store.streams`, what `agent-session/ai`'s resumableStreams writes): a session's streaming answer's
// chunks in order, read after a position, replaced by the session's next stream, ended, dropped and expired; a
// writer whose stream is no longer the session's writes nothing. Skipped on a store without `streams`.
import assert from "node:assert/strict";
import { hasSessionRegistry } from "../../contract/registry.js";
import { hasStreamStore, type StreamChunk, type StreamStore } from "../../contract/streams.js";
import type { ContractTest, Suite } from "../runner.js";
import { type ContractTarget, msg, withStore } from "./harness.js";

const chunks = (from: number, n: number, tag = "c"): StreamChunk[] =>
  Array.from({ length: n }, (_, i) => ({ seq: from + i, chunk: `data: ${tag}${from + i}\n\n` }));

function withStreams(t: ContractTest, target: ContractTarget, body: (streams: StreamStore) => Promise<void>) {
  return withStore(target, async (store) => {
    if (!hasStreamStore(store)) return t.skip("no stream store");
    await body(store.streams);
  });
}

/** The kept streams of a store. */
export function streamsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("kept streams", () => {
    test("chunks are read in order after a position, a page at a time, then the stream ends", (t) =>
      withStreams(t, target, async (streams) => {
        assert.equal(await streams.head("s"), null);
        await streams.start("s", "x", 1000);
        assert.deepEqual(await streams.head("s"), {
          streamId: "x",
          state: "live",
          error: null,
          updatedAt: 1000,
        });
        assert.equal(await streams.append("s", "x", chunks(0, 3), 1001), true);
        assert.equal(await streams.append("s", "x", chunks(3, 2), 1002), true);
        const first = await streams.read("s", "x", -1, 4);
        assert.deepEqual(first?.chunks, chunks(0, 4));
        assert.equal(first?.state, "live");
        assert.equal(first?.updatedAt, 1002);
        assert.deepEqual((await streams.read("s", "x", 3, 4))?.chunks, chunks(4, 1));
        assert.deepEqual((await streams.read("s", "x", 4, 4))?.chunks, []);
        await streams.end("s", "x", null, 1003);
        assert.equal(
          await streams.append("s", "x", chunks(5, 1), 1004),
          false,
          "an ended stream takes no chunk",
        );
        const done = await streams.read("s", "x", 2, 10);
        assert.deepEqual(
          { state: done?.state, error: done?.error, chunks: done?.chunks },
          { state: "done", error: null, chunks: chunks(3, 2) },
        );
        assert.equal(await streams.countChunks(), 5);
        await streams.drop("s", "x");
        assert.equal(await streams.head("s"), null);
        assert.equal(await streams.read("s", "x", -1, 10), null);
        assert.equal(await streams.countChunks(), 0);
      }));

    test("a session's next stream replaces the earlier one, whose late writer writes nothing", (t) =>
      withStreams(t, target, async (streams) => {
        await streams.start("s", "old", 1);
        await streams.append("s", "old", chunks(0, 3, "old"), 2);
        await streams.start("s", "new", 3);
        assert.equal(await streams.read("s", "old", -1, 10), null);
        assert.equal(await streams.append("s", "old", chunks(3, 1, "old"), 4), false);
        await streams.end("s", "old", "late", 5);
        await streams.drop("s", "old");
        assert.deepEqual(await streams.head("s"), {
          streamId: "new",
          state: "live",
          error: null,
          updatedAt: 3,
        });
        assert.equal(await streams.countChunks(), 0, "the earlier stream's chunks are dropped with it");
        assert.equal(await streams.append("s", "new", chunks(0, 1, "new"), 6), true);
        await streams.end("s", "new", "Too many chunks", 7);
        const failed = await streams.read("s", "new", -1, 10);
        assert.deepEqual(
          { state: failed?.state, error: failed?.error, chunks: failed?.chunks },
          { state: "failed", error: "Too many chunks", chunks: chunks(0, 1, "new") },
        );
      }));

    test("each session reads only its own stream, and expiry drops only streams not written since", (t) =>
      withStreams(t, target, async (streams) => {
        await streams.start("a", "x", 100);
        await streams.append("a", "x", chunks(0, 2, "a"), 100);
        await streams.start("b", "x", 100);
        await streams.append("b", "x", chunks(0, 1, "b"), 500);
        assert.deepEqual((await streams.read("b", "x", -1, 10))?.chunks, chunks(0, 1, "b"));
        assert.equal(await streams.read("c", "x", -1, 10), null);
        await streams.drop("c", "x");
        assert.equal(await streams.countChunks(), 3);
        assert.equal(await streams.expire(200), 1);
        assert.equal(await streams.head("a"), null);
        assert.equal((await streams.head("b"))?.streamId, "x");
        assert.equal(await streams.countChunks(), 1);
        assert.equal(await streams.expire(200), 0);
      }));

    test("deleting or erasing a session drops its kept stream", (t) =>
      withStore(target, async (store) => {
        if (!hasStreamStore(store)) return t.skip("no stream store");
        if (!hasSessionRegistry(store)) return t.skip("no registry");
        for (const id of ["deleted", "erased", "kept"]) {
          await store.registry.create({ id, name: id });
          await store.session(id).appendMessage(msg(`${id}-u`));
          await store.streams.start(id, "x", 1);
          await store.streams.append(id, "x", chunks(0, 2, id), 2);
        }
        await store.registry.delete("deleted");
        assert.equal(await store.streams.head("deleted"), null);
        if (store.registry.erase) {
          await store.registry.erase("erased");
          assert.equal(await store.streams.head("erased"), null);
        }
        assert.deepEqual((await store.streams.read("kept", "x", -1, 10))?.chunks, chunks(0, 2, "kept"));
      }));

    test("a kept stream outlives its store instance (another process reads it)", async (t) => {
      const reopen = target.reopen;
      if (!reopen) return t.skip("no reopen: an in-process store");
      let store = await target.create();
      try {
        if (!hasStreamStore(store)) return t.skip("no stream store");
        await store.streams.start("s", "x", 10);
        await store.streams.append("s", "x", chunks(0, 2), 11);
        store = await reopen(store);
        if (!hasStreamStore(store)) throw new Error("the reopened store has no streams");
        assert.deepEqual((await store.streams.read("s", "x", 0, 10))?.chunks, chunks(1, 1));
      } finally {
        if (target.destroy) await target.destroy(store);
        else await store.close();
      }
    });
  });
}
