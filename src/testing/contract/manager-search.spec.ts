import assert from "node:assert/strict";
import type { SessionInfo } from "../../contract/registry.js";
import { SessionManager } from "../../manager/manager.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode } from "./harness.js";
import { withManager, withRegistryStore } from "./manager-harness.js";

async function seed(manager: SessionManager): Promise<{ a: SessionInfo; b: SessionInfo }> {
  const a = await manager.create("a");
  const b = await manager.create("b");
  await manager.append(a.id, msg("q", "When is the deployment of the billing service?"));
  await manager.append(a.id, msg("old", "The deployment is on Monday", "assistant"));
  await manager.append(a.id, msg("new", "The deployment moved to Friday", "assistant"), "q");
  await manager.append(b.id, msg("b1", "Friday deployment checklist"));
  await manager.append(b.id, msg("b2", "Unrelated note about lunch", "assistant"));
  return { a, b };
}

/** SessionManager.search, the session_search tool and the searchable history block. */
export function managerSearchSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("SessionManager search", () => {
    test("searches across sessions with Session.search semantics; hits say where they are", (t) =>
      withManager(t, target, async (manager) => {
        const { a, b } = await seed(manager);
        const hits = await manager.search("friday deployment");
        // Ranked recall: the messages matching both words first, then those matching one.
        assert.deepEqual(ids(hits).slice(0, 2).sort(), ["b1", "new"]);
        assert.deepEqual(ids(hits).slice(2).sort(), ["old", "q"]);
        assert.deepEqual(ids(await manager.search("friday deployment", { match: "all" })).sort(), [
          "b1",
          "new",
        ]);
        const byId = new Map(hits.map((h) => [h.id, h]));
        assert.equal(byId.get("new")?.sessionId, a.id);
        assert.equal(byId.get("b1")?.sessionId, b.id);
        assert.equal(byId.get("b1")?.role, "user");
        assert.equal(byId.get("b1")?.content, "Friday deployment checklist");
        assert.ok(hits.every((h) => h.onActivePath === (h.id !== "old") && typeof h.createdAt === "string"));
        const scoped = await manager.search("deployment", { sessionId: a.id });
        assert.deepEqual(ids(scoped).sort(), ["new", "old", "q"]);
        assert.deepEqual(
          ids(scoped).sort(),
          ids(await manager.getSession(a.id).search("deployment")).sort(),
          "the same as Session.search",
        );
        assert.deepEqual(await manager.search("deployment zebra", { match: "all" }), []);
        assert.deepEqual(await manager.search("zebra"), []);
        assert.deepEqual(await manager.search("   "), []);
        assert.equal((await manager.search("deployment", { limit: 2 })).length, 2);
        await rejectsWithCode(manager.search("deployment", { limit: -1 }), "INVALID_ARGUMENT");
        await rejectsWithCode(manager.search("deployment", { limit: 1001 }), "INVALID_ARGUMENT", {
          path: "limit",
          rule: "range",
        });
      }));

    test("sessionIds answers only for registered sessions; every session without it", (t) =>
      withManager(t, target, async (manager, store) => {
        const { a, b } = await seed(manager);
        // Written through the store, never registered: the manager does not know this session.
        await store.session("ghost").appendMessage(msg("g1", "Friday deployment of the ghost"));
        const scoped = await manager.search("deployment", { sessionIds: ["ghost", b.id] });
        assert.deepEqual(ids(scoped), ["b1"]);
        assert.deepEqual(await manager.search("deployment", { sessionIds: ["ghost"] }), []);
        assert.deepEqual(await manager.search("deployment", { sessionIds: ["ghost"], match: "all" }), []);
        assert.deepEqual(ids(await manager.search("deployment", { sessionIds: [a.id, a.id] })).sort(), [
          "new",
          "old",
          "q",
        ]);
        // As documented (MANAGER.md), a search of every session covers the store, as the reference's does.
        assert.ok(ids(await manager.search("deployment")).includes("g1"));
        await rejectsWithCode(
          manager.search("deployment", { sessionIds: "ghost" as never }),
          "INVALID_ARGUMENT",
        );
        await rejectsWithCode(
          manager.search("deployment", { sessionIds: [42] as never }),
          "INVALID_ARGUMENT",
        );
        // A bad query is refused whatever the sessions leave to search.
        await rejectsWithCode(
          manager.search("x".repeat(5000), { sessionIds: ["ghost"] }),
          "INVALID_ARGUMENT",
        );
      }));

    test("branch-aware: active keeps each session's active path, all flags abandoned branches", (t) =>
      withManager(t, target, async (manager) => {
        const { a } = await seed(manager);
        const all = await manager.search("deployment", { branch: "all" });
        assert.deepEqual(ids(all).sort(), ["b1", "new", "old", "q"]);
        assert.equal(all.find((h) => h.id === "old")?.onActivePath, false);
        assert.ok(all.filter((h) => h.id !== "old").every((h) => h.onActivePath === true));
        const active = await manager.search("deployment", { branch: "active" });
        assert.deepEqual(ids(active).sort(), ["b1", "new", "q"]);
        const activeInA = await manager.search("deployment", { branch: "active", sessionId: a.id });
        assert.deepEqual(ids(activeInA).sort(), ["new", "q"]);
        await rejectsWithCode(manager.search("x", { branch: "some" as never }), "INVALID_ARGUMENT");
      }));

    test("tools(): session_search formats hits, says when nothing matched, never throws", (t) =>
      withManager(t, target, async (manager) => {
        await seed(manager);
        const tools = manager.tools();
        assert.deepEqual(Object.keys(tools), ["session_search"]);
        const tool = tools.session_search!;
        assert.match(tool.description, /across all sessions/);
        assert.equal(tool.inputSchema.safeParse({ query: "x" }).success, true);
        assert.equal(tool.inputSchema.safeParse({}).success, false);
        assert.equal(await tool.execute({ query: "lunch" }), "[assistant] Unrelated note about lunch");
        const two = await tool.execute({ query: "friday deployment" });
        assert.deepEqual(two.split("\n---\n").slice(0, 2).sort(), [
          "[assistant] The deployment moved to Friday",
          "[user] Friday deployment checklist",
        ]);
        assert.equal(await tool.execute({ query: "zebra" }), "No results found.");
        // Richer output on request: the turns around each hit, the hit marked.
        const rich = await manager
          .tools(undefined, { context: 1 })
          .session_search!.execute({ query: "moved Friday" });
        assert.match(
          rich,
          /^ {2}\[user\] When is the deployment of the billing service\?\n> \[assistant\] The deployment moved to Friday$/m,
        );
        assert.throws(() => manager.tools(undefined, { context: 11 }), { code: "INVALID_ARGUMENT" });
        assert.match(await tool.execute({ query: 42 }), /^Error: /);
        assert.match(await tool.execute(null), /^Error: /);
      }));

    test("withSearchableHistory: a read-only search block over every session", (t) =>
      withRegistryStore(t, target, async (store) => {
        const manager = SessionManager.create(store).withContext("memory").withSearchableHistory("history");
        const { a, b } = await seed(manager);
        const session = manager.getSession(b.id);
        await session.ready();
        const block = session.getContextBlock("history");
        assert.ok(block);
        assert.equal(block.description, "Cross-session conversation history");
        assert.deepEqual([block.writable, block.isSearchable], [false, true]);
        assert.equal(block.content, "2 sessions available for search.");
        const tools = await session.tools();
        const search = tools.search_context!;
        assert.equal(
          await search.execute({ label: "history", query: "billing" }),
          "[user] When is the deployment of the billing service?",
        );
        assert.equal(await search.execute({ label: "history", query: "zebra" }), "No results found.");
        assert.match(
          await session.executeTool("set_context", { label: "history", content: "x" }),
          /^Error: /,
        );
        await manager.delete(a.id);
        const fresh = manager.getSession((await manager.create("c")).id);
        await manager.delete(b.id);
        await fresh.ready();
        assert.equal(fresh.getContextBlock("history")?.content, "1 session available for search.");
        assert.throws(() => SessionManager.create(store).withContext("h").withSearchableHistory("h"), {
          code: "INVALID_ARGUMENT",
        });
      }));
  });
}
