// Auto-wired blocks are stored under "<label>_<sessionId>" (the reference's keys), which can name two blocks:
// "notes" of session "team_a" and "notes_team" of session "a" are both notes_team_a. Such a key goes to the longer
// label: a new session reaching it through the shorter one is refused, and one stored before keeps working with
// that block alone reading nothing and refusing writes, so no two sessions read, overwrite or delete one value.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { foreignBlockKey } from "../../src/context/block-keys.js";
import { hasSessionRegistry } from "../../src/contract/registry.js";
import { SessionManager } from "../../src/index.js";
import { Session } from "../../src/session/session.js";
import { msg } from "../../src/testing/contract/harness.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { warningsOf } from "../helpers/warnings.js";
import { contextBackends } from "./backends.js";

const shared = { code: "INVALID_ARGUMENT", path: "label", rule: "conflict" } as const;

test("a key belongs to the longer label; an id ending in '_' collides with no one", () => {
  assert.match(foreignBlockKey(["notes", "notes_team"], "notes", "team_a") ?? "", /session "a"/);
  assert.equal(foreignBlockKey(["notes", "notes_team"], "notes_team", "a"), undefined);
  assert.equal(foreignBlockKey(["notes", "notes_team"], "notes", "team_"), undefined);
  assert.equal(foreignBlockKey(["a", "a_"], "a", "_"), undefined);
  assert.match(foreignBlockKey(["notes", "notes_x"], "notes", "x") ?? "", /session ""/);
});

for (const backend of contextBackends) {
  describe(`block keys name one session's block (${backend.name})`, () => {
    test("a block whose key is another session's reads nothing and refuses writes; the session still works", async () => {
      const store = backend.create();
      const a = Session.create(store).forSession("a").withContext("notes").withContext("notes_team");
      await a.replaceContextBlock("notes_team", "a's team notes");
      for (const labels of [
        ["notes", "notes_team"],
        ["notes_team", "notes"],
      ]) {
        let s = Session.create(store).forSession("team_a");
        for (const label of labels) s = s.withContext(label);
        const warnings = await warningsOf("AgentSessionContextWarning", () => s.ready());
        assert.ok(warnings.some((w) => w.message.includes('"notes_team_a"')));
        assert.equal(s.getContextBlock("notes")?.content, "");
        await rejectsWithIssue(s.replaceContextBlock("notes", "team_a's notes"), shared);
        const tools = await s.tools();
        assert.match(
          await tools.set_context!.execute({ label: "notes", content: "x" }),
          /^Error: .*notes_team_a/,
        );
        await s.appendMessage(msg("m1", "the history works"));
        await s.replaceContextBlock("notes_team", "team_a's own team notes");
      }
      assert.equal(await store.blocks.getBlock("notes_team_a"), "a's team notes");
      // Added at runtime, the block is refused and not registered.
      const late = Session.create(store).forSession("team_a").withContext("notes_team");
      await late.ready();
      await rejectsWithIssue(late.addContext("notes"), shared);
      assert.equal(late.getContextBlock("notes"), null);
      // A block with its own provider is not stored under a key: it takes no part.
      const provided = Session.create(store)
        .forSession("team_a")
        .withContext("notes", { provider: { get: async () => "mine" } })
        .withContext("notes_team");
      await provided.ready();
      assert.equal(provided.getContextBlock("notes")?.content, "mine");
    });

    test("a manager refuses to create such a session, and deleting one stored before leaves the other's block", async () => {
      const store = backend.create();
      const manager = SessionManager.create(store).withContext("memory").withContext("memory_user");
      await assert.rejects(manager.create("B", { id: "user_1" }), { code: "INVALID_ARGUMENT" });
      assert.equal(await manager.get("user_1"), null);
      await manager.create("A", { id: "1" });
      await manager.create("C", { id: "team_1" });
      await manager.create("D", { id: "user_" });
      await manager.getSession("team_1").replaceContextBlock("memory", "team_1's memory");
      await manager.getSession("1").replaceContextBlock("memory_user", "1's user memory");
      // Registered without the manager (as before such ids were refused): usable, and its delete keeps 1's block.
      assert.ok(hasSessionRegistry(store));
      await store.registry.create({ id: "user_1", name: "legacy" });
      await manager.getSession("user_1").appendMessage(msg("m1", "hello"));
      await manager.getSession("user_1").replaceContextBlock("memory_user", "user_1's user memory");
      // Its foreign "memory" is no reason to refuse another block added at runtime.
      await manager.getSession("user_1").addContext("notes");
      await warningsOf("AgentSessionContextWarning", () => manager.delete("user_1"));
      assert.equal(await store.blocks.getBlock("memory_user_user_1"), null);
      assert.equal(await store.blocks.getBlock("memory_user_1"), "1's user memory");
      await manager.delete("1");
      assert.equal(await store.blocks.getBlock("memory_team_1"), "team_1's memory");
      assert.equal(await store.blocks.getBlock("memory_user_1"), null);
    });
  });
}
