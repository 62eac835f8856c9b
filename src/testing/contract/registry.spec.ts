import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import { hasSessionRegistry, type SessionInfo } from "../../contract/registry.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode } from "./harness.js";
import { isIso, tick, withRegistryStore } from "./manager-harness.js";

/**
 * The session registry (`store.registry`) that SessionManager runs on; the same on every backend. What it refuses
 * (input, usage totals out of range) is in registry-limits.spec.ts.
 */
export function registrySpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("session registry", () => {
    test("create: the reference's row shape, zero counters, ISO timestamps; a taken id is CONFLICT", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        const info = await registry.create({ id: "s1", name: "First", model: "m-1", source: "web" });
        assert.deepEqual(Object.keys(info).sort(), [
          "cache_read_tokens",
          "cache_write_tokens",
          "created_at",
          "end_reason",
          "estimated_cost",
          "id",
          "input_tokens",
          "model",
          "name",
          "output_tokens",
          "parent_session_id",
          "source",
          "updated_at",
        ]);
        assert.deepEqual(
          { ...info, created_at: "", updated_at: "" },
          {
            id: "s1",
            name: "First",
            parent_session_id: null,
            model: "m-1",
            source: "web",
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            estimated_cost: 0,
            end_reason: null,
            created_at: "",
            updated_at: "",
          },
        );
        assert.ok(isIso(info.created_at) && info.created_at === info.updated_at, info.created_at);
        assert.deepEqual(await registry.get("s1"), info);
        const child = await registry.create({ id: "s2", name: "", parentSessionId: "s1" });
        assert.equal(child.parent_session_id, "s1");
        assert.equal(child.model, null);
        assert.equal(child.name, "");
        await rejectsWithCode(registry.create({ id: "s1", name: "again" }), "CONFLICT");
        assert.equal((await registry.get("s1"))?.name, "First");
        assert.equal(await registry.get("ghost"), null);
        assert.equal(await registry.count(), 2);
      }));

    test("list: newest activity first, stable within a millisecond, paged", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        // Created back to back, usually within one millisecond: write order must still decide.
        for (let i = 0; i < 20; i++) await registry.create({ id: `s${i}`, name: `n${i}` });
        const expected = Array.from({ length: 20 }, (_, i) => `s${19 - i}`);
        assert.deepEqual(ids(await registry.list()), expected);
        assert.deepEqual(ids(await registry.list()), expected, "the same order every time");
        assert.equal(await registry.touch("s3"), true);
        await registry.rename("s7", "renamed");
        await registry.addUsage("s11", { inputTokens: 1, outputTokens: 1, cost: 0 });
        await registry.markEnded("s0", "done");
        const order = ids(await registry.list());
        assert.deepEqual(order.slice(0, 4), ["s0", "s11", "s7", "s3"]);
        assert.deepEqual(ids(await registry.list({ limit: 3 })), ["s0", "s11", "s7"]);
        assert.deepEqual(ids(await registry.list({ limit: 2, offset: 2 })), ["s7", "s3"]);
        assert.deepEqual(ids(await registry.list({ offset: 19 })), [order[19]]);
        assert.deepEqual(await registry.list({ limit: 0 }), []);
      }));

    test("scan: every session once, by id, in pages that writes meanwhile do not shift", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        for (const id of ["d", "b", "f", "a", "g", "c", "e"]) await registry.create({ id, name: id });
        const all: SessionInfo[] = [];
        for await (const info of registry.scan()) all.push(info);
        assert.deepEqual(ids(all), ["a", "b", "c", "d", "e", "f", "g"]);
        assert.deepEqual(all[0], await registry.get("a"));
        // Pages of 2. After "b": a session ahead is touched (list()'s order moves), a read one is deleted, and one
        // is created behind the scan; every session registered throughout still comes exactly once.
        const seen: string[] = [];
        for await (const info of registry.scan({ pageSize: 2 })) {
          seen.push(info.id);
          if (info.id !== "b") continue;
          await registry.touch("f");
          await registry.rename("e", "renamed");
          await registry.delete("a");
          await registry.create({ id: "0", name: "new" });
        }
        assert.deepEqual(seen, ["a", "b", "c", "d", "e", "f", "g"]);
        assert.deepEqual(ids(await registry.list({ limit: 2 })), ["0", "e"]);
        // Ids a collation orders differently from their bytes, one a page: each page goes on after the last.
        const odd = ["B", "b2", "ä", "A", "é", "E", "😀", "a b", "-x", "Z", "ß", "\u{10FFFF}", "日本"];
        for (const id of odd) await registry.create({ id, name: "" });
        const paged: string[] = [];
        for await (const info of registry.scan({ pageSize: 1 })) paged.push(info.id);
        assert.deepEqual([...paged].sort(), [...(await registry.list()).map((info) => info.id)].sort());
        assert.equal(new Set(paged).size, paged.length);
      }));

    test("scan with a source: exactly that source's sessions, by id, in pages", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        // Created out of id order; "Agent" and "" are other sources, a missing source is none.
        const sources = [
          "agent",
          undefined,
          "web",
          "agent",
          "Agent",
          "agent",
          "",
          "agent",
          undefined,
          "agent",
        ];
        for (let i = sources.length - 1; i >= 0; i--) {
          const source = sources[i];
          await registry.create({ id: `k${i}`, name: "", ...(source === undefined ? {} : { source }) });
        }
        const of = (source: string) => sources.flatMap((s, i) => (s === source ? [`k${i}`] : []));
        const scanned = async (options: { source: string; pageSize?: number }) => {
          const found: SessionInfo[] = [];
          for await (const info of registry.scan(options)) found.push(info);
          return found;
        };
        const agent = await scanned({ source: "agent" });
        assert.deepEqual(ids(agent), ["k0", "k3", "k5", "k7", "k9"]);
        assert.deepEqual(agent[1], await registry.get("k3"));
        // Pages smaller than the matches, one that ends exactly at the last match, and one larger.
        for (const pageSize of [1, 2, 5, 6]) {
          assert.deepEqual(
            ids(await scanned({ source: "agent", pageSize })),
            of("agent"),
            `pageSize ${pageSize}`,
          );
        }
        for (const source of ["web", "Agent", ""])
          assert.deepEqual(ids(await scanned({ source })), of(source));
        assert.deepEqual(await scanned({ source: "nobody" }), []);
        // A session deleted and registered again under another source while the scan runs is not yielded.
        const seen: string[] = [];
        for await (const info of registry.scan({ source: "agent", pageSize: 2 })) {
          seen.push(info.id);
          if (info.id !== "k0") continue;
          await registry.delete("k7");
          await registry.create({ id: "k7", name: "", source: "web" });
          await registry.create({ id: "k8a", name: "", source: "agent" });
        }
        assert.deepEqual(
          seen.filter((id) => id !== "k8a"),
          ["k0", "k3", "k5", "k9"],
        );
        assert.equal(await registry.count(), sources.length + 1);
      }));

    test("updates bump updated_at; unknown ids give null or false", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        const created = await registry.create({ id: "a", name: "A" });
        await tick();
        const renamed = await registry.rename("a", "B");
        assert.equal(renamed?.name, "B");
        assert.ok(renamed && isIso(renamed.updated_at) && renamed.updated_at > created.updated_at);
        assert.equal(renamed?.created_at, created.created_at);
        await tick();
        assert.equal(await registry.touch("a"), true);
        const touched = await registry.get("a");
        assert.ok(touched && touched.updated_at > renamed.updated_at);
        const ended = await registry.markEnded("a", "compaction");
        assert.equal(ended?.end_reason, "compaction");
        assert.equal(await registry.rename("ghost", "x"), null);
        assert.equal(await registry.touch("ghost"), false);
        assert.equal(await registry.addUsage("ghost", { inputTokens: 1, outputTokens: 1, cost: 1 }), null);
        assert.equal(await registry.markEnded("ghost", "x"), null);
        assert.equal(await registry.count(), 1);
      }));

    test("usage accumulates, cache tokens included", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        await registry.create({ id: "u", name: "usage" });
        await registry.addUsage("u", { inputTokens: 100, outputTokens: 20, cost: 0.25 });
        const info = await registry.addUsage("u", {
          inputTokens: 5,
          outputTokens: 1,
          cost: 0.125,
          cacheReadTokens: 70,
          cacheWriteTokens: 30,
        });
        assert.equal(info?.input_tokens, 105);
        assert.equal(info?.output_tokens, 21);
        assert.equal(info?.cache_read_tokens, 70);
        assert.equal(info?.cache_write_tokens, 30);
        assert.equal(info?.estimated_cost, 0.375);
        assert.deepEqual(await registry.get("u"), info);
      }));

    test("delete removes the row, messages, overlays, index rows and the given blocks, nothing else", (t) =>
      withRegistryStore(t, target, async (store) => {
        const { registry } = store;
        await registry.create({ id: "gone", name: "gone" });
        await registry.create({ id: "kept", name: "kept" });
        const gone = store.session("gone");
        await gone.appendMessage(msg("g1", "ephemeral wombat"));
        await gone.appendMessage(msg("g2", "second wombat"));
        await gone.addCompaction("summary", "g1", "g1");
        await store.session("kept").appendMessage(msg("k1", "durable wombat"));
        if (hasContextStorage(store)) {
          await store.blocks.setBlock("memory_gone", "x");
          await store.blocks.setBlock("memory_kept", "y");
        }
        assert.equal(await registry.delete("gone", { blockKeys: ["memory_gone", "never_written"] }), true);
        assert.equal(await registry.get("gone"), null);
        assert.deepEqual(await gone.getHistory(), []);
        assert.equal(await gone.getMessage("g1"), null);
        assert.equal(await gone.getLatestLeaf(), null);
        assert.equal(await gone.getPathLength(), 0);
        assert.deepEqual(await gone.getCompactions(), []);
        assert.deepEqual(ids(await store.searchMessages("wombat")), ["k1"]);
        assert.deepEqual(await store.searchMessages("wombat", { sessionId: "gone" }), []);
        if (hasContextStorage(store)) {
          assert.equal(await store.blocks.getBlock("memory_gone"), null);
          assert.equal(await store.blocks.getBlock("memory_kept"), "y");
        }
        assert.deepEqual(ids(await registry.list()), ["kept"]);
        assert.deepEqual(ids(await store.session("kept").getHistory()), ["k1"]);
        assert.equal(await registry.delete("gone"), false, "a second delete finds nothing");
        // The id can be used again and starts empty; reused message ids are new messages.
        await registry.create({ id: "gone", name: "again" });
        await gone.appendMessage(msg("g1", "reborn"));
        assert.deepEqual(ids(await gone.getHistory()), ["g1"]);
        assert.deepEqual(ids(await store.searchMessages("reborn")), ["g1"]);
        assert.deepEqual(await store.searchMessages("ephemeral"), []);
      }));

    test("delete of an unregistered id still removes its messages", (t) =>
      withRegistryStore(t, target, async (store) => {
        await store.session("orphan").appendMessage(msg("o1", "orphaned narwhal"));
        assert.equal(await store.registry.delete("orphan"), false);
        assert.deepEqual(await store.session("orphan").getHistory(), []);
        assert.deepEqual(await store.searchMessages("narwhal"), []);
      }));

    test("a registered id reads exactly the messages written under it", (t) =>
      withRegistryStore(t, target, async (store) => {
        await store.session("adopted").appendMessage(msg("a1", "written before registration"));
        await store.registry.create({ id: "adopted", name: "adopted" });
        assert.deepEqual(ids(await store.session("adopted").getHistory()), ["a1"]);
      }));

    if (target.reopen) {
      const reopen = target.reopen;
      test("rows survive reopening the store", async (t) => {
        let store = await target.create();
        try {
          if (!hasSessionRegistry(store)) {
            t.skip("this store has no session registry (store.registry) yet");
            return;
          }
          const registry = store.registry;
          await registry.create({ id: "p1", name: "one" });
          await registry.create({ id: "p2", name: "two", model: "m" });
          await registry.addUsage("p1", { inputTokens: 3, outputTokens: 4, cost: 0.5, cacheReadTokens: 2 });
          const before = await registry.list();
          store = await reopen(store);
          assert.ok(hasSessionRegistry(store));
          const again = store.registry;
          assert.deepEqual(await again.list(), before);
          await again.touch("p2");
          assert.deepEqual(ids(await again.list()), ["p2", "p1"]);
        } finally {
          if (target.destroy) await target.destroy(store);
          else await store.close();
        }
      });
    }
  });
}
