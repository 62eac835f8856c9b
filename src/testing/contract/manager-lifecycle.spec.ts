import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import type { SessionError } from "../../errors.js";
import { SessionManager } from "../../manager/manager.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode } from "./harness.js";
import { isIso, withManager, withRegistryStore } from "./manager-harness.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** SessionManager: create, get, list, rename, delete, getSession and templates, usage, unknown ids. */
export function managerLifecycleSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("SessionManager lifecycle", () => {
    test("create, get, list (newest activity first), rename", (t) =>
      withManager(t, target, async (manager) => {
        const a = await manager.create("My Chat");
        assert.match(a.id, UUID);
        assert.equal(a.name, "My Chat");
        assert.equal(a.input_tokens, 0);
        assert.ok(isIso(a.created_at));
        const b = await manager.create("Other", { parentSessionId: a.id, model: "claude", source: "web" });
        assert.deepEqual([b.parent_session_id, b.model, b.source], [a.id, "claude", "web"]);
        assert.deepEqual(await manager.get(b.id), b);
        assert.equal(await manager.get("ghost"), null);
        assert.deepEqual(ids(await manager.list()), [b.id, a.id]);
        await manager.append(a.id, msg("m1"));
        assert.deepEqual(ids(await manager.list()), [a.id, b.id]);
        const renamed = await manager.rename(b.id, "Renamed");
        assert.equal(renamed.name, "Renamed");
        assert.equal((await manager.get(b.id))?.name, "Renamed");
        assert.deepEqual(ids(await manager.list()), [b.id, a.id]);
        assert.deepEqual(ids(await manager.list({ limit: 1, offset: 1 })), [a.id]);
      }));

    test("create with a chosen id adopts it; a taken id is CONFLICT; bad input is INVALID_ARGUMENT", (t) =>
      withManager(t, target, async (manager, store) => {
        await store.session("chat-1").appendMessage(msg("early", "written before registration"));
        const info = await manager.create("Adopted", { id: "chat-1" });
        assert.equal(info.id, "chat-1");
        assert.deepEqual(ids(await manager.getHistory("chat-1")), ["early"]);
        await rejectsWithCode(manager.create("Again", { id: "chat-1" }), "CONFLICT");
        await rejectsWithCode(manager.create(5 as never), "INVALID_ARGUMENT");
        await rejectsWithCode(manager.create("x", "opts" as never), "INVALID_ARGUMENT");
        await rejectsWithCode(manager.create("x", { model: 5 as never }), "INVALID_ARGUMENT");
        await rejectsWithCode(manager.create("x", { id: "" }), "INVALID_ARGUMENT");
        await rejectsWithCode(manager.rename("chat-1", null as never), "INVALID_ARGUMENT");
        await rejectsWithCode(manager.get(42 as never), "INVALID_ARGUMENT");
        await rejectsWithCode(manager.list({ limit: -1 }), "INVALID_ARGUMENT");
        assert.equal(await store.registry.count(), 1);
      }));

    test("every method naming an unknown session is NOT_FOUND and writes nothing", (t) =>
      withManager(t, target, async (manager, store) => {
        const calls: [string, () => Promise<unknown>][] = [
          ["rename", () => manager.rename("ghost", "x")],
          ["addUsage", () => manager.addUsage("ghost", 1, 1, 0.1)],
          ["append", () => manager.append("ghost", msg("m"))],
          ["upsert", () => manager.upsert("ghost", msg("m"))],
          ["appendAll", () => manager.appendAll("ghost", [msg("m")])],
          ["getHistory", () => manager.getHistory("ghost")],
          ["getMessageCount", () => manager.getMessageCount("ghost")],
          ["clearMessages", () => manager.clearMessages("ghost")],
          ["deleteMessages", () => manager.deleteMessages("ghost", ["m"])],
          ["getBranches", () => manager.getBranches("ghost", "m")],
          ["fork", () => manager.fork("ghost", "m", "fork")],
          ["addCompaction", () => manager.addCompaction("ghost", "s", "m", "m")],
          ["getCompactions", () => manager.getCompactions("ghost")],
          ["compactAndSplit", () => manager.compactAndSplit("ghost", "summary")],
          ["search", () => manager.search("m", { sessionId: "ghost" })],
        ];
        for (const [name, call] of calls) {
          await assert.rejects(
            call(),
            (error: SessionError) => error.code === "NOT_FOUND",
            `${name} should be NOT_FOUND`,
          );
        }
        assert.deepEqual(await store.session("ghost").getHistory(), []);
        assert.equal(await store.registry.count(), 0);
        assert.equal(await manager.delete("ghost"), false);
      }));

    test("getSession is cached per id and carries every template, namespaced per session", (t) =>
      withRegistryStore(t, target, async (store) => {
        const manager = SessionManager.create(store)
          .withContext("soul", { provider: { get: async () => "You are helpful." } })
          .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
          .withCachedPrompt();
        const a = await manager.create("a");
        const b = await manager.create("b");
        const sa = manager.getSession(a.id);
        assert.equal(manager.getSession(a.id), sa);
        assert.notEqual(manager.getSession(b.id), sa);
        assert.equal(sa.sessionId, a.id);
        await sa.ready();
        assert.deepEqual(
          sa.getContextBlocks().map((block) => [block.label, block.writable]),
          [
            ["soul", false],
            ["memory", true],
          ],
        );
        await sa.replaceContextBlock("memory", "likes tea");
        const prompt = await sa.freezeSystemPrompt();
        assert.match(prompt, /likes tea/);
        const sb = manager.getSession(b.id);
        await sb.ready();
        assert.equal(sb.getContextBlock("memory")?.content, "");
        if (hasContextStorage(store)) {
          assert.equal(await store.blocks.getBlock(`memory_${a.id}`), "likes tea");
          assert.equal(await store.blocks.getBlock(`_system_prompt_${a.id}`), prompt);
          assert.equal(await store.blocks.getBlock("memory"), null);
        }
        assert.throws(() => manager.withContext("late"), { code: "INVALID_ARGUMENT" });
        assert.throws(() => manager.getSession(""), { code: "INVALID_ARGUMENT" });
      }));

    test("delete removes messages, overlays, index rows, namespaced blocks and the cached prompt", (t) =>
      withRegistryStore(t, target, async (store) => {
        if (!hasContextStorage(store)) return t.skip("this store cannot hold context blocks");
        const manager = SessionManager.create(store).withContext("memory").withCachedPrompt();
        const gone = await manager.create("gone");
        const kept = await manager.create("kept");
        for (const info of [gone, kept]) {
          await manager.append(info.id, msg(`${info.name}-1`, `quokka in ${info.name}`));
          await manager.append(info.id, msg(`${info.name}-2`, "second"));
          await manager.addCompaction(info.id, "summary", `${info.name}-1`, `${info.name}-1`);
          const session = manager.getSession(info.id);
          await session.replaceContextBlock("memory", `memory of ${info.name}`);
          await session.addContext("notes");
          await session.replaceContextBlock("notes", "runtime block");
          await session.freezeSystemPrompt();
        }
        const before = manager.getSession(gone.id);
        assert.equal(await manager.delete(gone.id), true);
        assert.equal(await manager.get(gone.id), null);
        assert.deepEqual(ids(await manager.list()), [kept.id]);
        assert.deepEqual(await store.session(gone.id).getHistory(), []);
        assert.deepEqual(await store.session(gone.id).getCompactions(), []);
        assert.deepEqual(
          (await manager.search("quokka")).map((hit) => hit.sessionId),
          [kept.id],
        );
        for (const key of [`memory_${gone.id}`, `notes_${gone.id}`, `_system_prompt_${gone.id}`]) {
          assert.equal(await store.blocks.getBlock(key), null, key);
        }
        assert.equal(await store.blocks.getBlock(`memory_${kept.id}`), "memory of kept");
        assert.equal(await store.blocks.getBlock(`notes_${kept.id}`), "runtime block");
        assert.notEqual(await store.blocks.getBlock(`_system_prompt_${kept.id}`), null);
        assert.notEqual(manager.getSession(gone.id), before, "the cached Session is dropped");
        assert.equal(await manager.delete(gone.id), false);
        assert.equal((await manager.getHistory(kept.id)).length, 2);
      }));

    test("a Session and its tools held across delete cannot write the deleted session's rows back", (t) =>
      withRegistryStore(t, target, async (store) => {
        if (!hasContextStorage(store)) return t.skip("this store cannot hold context blocks");
        const manager = SessionManager.create(store).withContext("memory");
        await manager.create("old", { id: "same" });
        const held = manager.getSession("same");
        await held.replaceContextBlock("memory", "before");
        const tools = await held.tools();
        const provider = await held.provider();
        assert.equal(await manager.delete("same"), true);
        await rejectsWithCode(held.replaceContextBlock("memory", "stale"), "CLOSED");
        await rejectsWithCode(held.appendMessage(msg("late")), "CLOSED");
        await rejectsWithCode(provider.appendMessage(msg("late")), "CLOSED");
        const written = await tools.set_context!.execute({ label: "memory", content: "stale from a tool" });
        assert.match(String(written), /^Error: /);
        await manager.create("new", { id: "same" });
        const fresh = manager.getSession("same");
        assert.notEqual(fresh, held);
        await fresh.ready();
        assert.equal(fresh.getContextBlock("memory")?.content ?? "", "");
        assert.equal(await store.blocks.getBlock("memory_same"), null);
        assert.deepEqual(await manager.getHistory("same"), []);
        await fresh.replaceContextBlock("memory", "after");
        assert.equal(await store.blocks.getBlock("memory_same"), "after");
      }));

    test("usage: counters accumulate (cache tokens too), validated, never inherited by a fork", (t) =>
      withManager(t, target, async (manager) => {
        const info = await manager.create("usage");
        await manager.append(info.id, msg("u1"));
        await manager.addUsage(info.id, 1000, 200, 0.5);
        const after = await manager.addUsage(info.id, 10, 2, 0.25, {
          cacheReadTokens: 800,
          cacheWriteTokens: 50,
        });
        assert.deepEqual(
          [after.input_tokens, after.output_tokens, after.cache_read_tokens, after.cache_write_tokens],
          [1010, 202, 800, 50],
        );
        assert.equal(after.estimated_cost, 0.75);
        for (const bad of [
          () => manager.addUsage(info.id, -1, 0, 0),
          () => manager.addUsage(info.id, 1.5, 0, 0),
          () => manager.addUsage(info.id, 1, Number.NaN, 0),
          () => manager.addUsage(info.id, 1, 1, Number.POSITIVE_INFINITY),
          () => manager.addUsage(info.id, 1, 1, 0, { cacheReadTokens: -3 }),
          () => manager.addUsage(info.id, "1" as never, 1, 0),
        ]) {
          await rejectsWithCode(bad(), "INVALID_ARGUMENT");
        }
        assert.equal((await manager.get(info.id))?.input_tokens, 1010);
        const fork = await manager.fork(info.id, "u1", "fork");
        assert.deepEqual(
          [
            fork.input_tokens,
            fork.output_tokens,
            fork.cache_read_tokens,
            fork.cache_write_tokens,
            fork.estimated_cost,
          ],
          [0, 0, 0, 0, 0],
        );
      }));
  });
}
