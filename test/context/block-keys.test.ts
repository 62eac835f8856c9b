// Auto-wired blocks are stored under "<label>_<sessionId>" (the reference's keys), which can name two blocks:
// "notes" of session "team_a" and "notes_team" of session "a" are both notes_team_a. The session that would reach
// such a key through the shorter label is refused, so no two sessions read, overwrite or delete one stored value.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SessionManager } from "../../src/index.js";
import { Session } from "../../src/session/session.js";
import { contextBackends } from "./backends.js";

const shared = {
  code: "INVALID_ARGUMENT",
  message: /"notes_team_a", which is the key of block "notes_team" of session "a"/,
};

for (const backend of contextBackends) {
  describe(`block keys name one session's block (${backend.name})`, () => {
    test("a Session whose block key is another session's is refused, in either order of its blocks", async () => {
      const store = backend.create();
      const a = Session.create(store).forSession("a").withContext("notes").withContext("notes_team");
      await a.replaceContextBlock("notes_team", "a's team notes");
      for (const labels of [
        ["notes", "notes_team"],
        ["notes_team", "notes"],
      ]) {
        let s = Session.create(store).forSession("team_a");
        for (const label of labels) s = s.withContext(label);
        await assert.rejects(s.replaceContextBlock("notes", "team_a's notes"), shared);
      }
      // Added at runtime, the block is refused and not registered.
      const late = Session.create(store).forSession("team_a").withContext("notes_team");
      await late.ready();
      await assert.rejects(late.addContext("notes"), shared);
      assert.equal(late.getContextBlock("notes"), null);
      assert.equal(await store.blocks.getBlock("notes_team_a"), "a's team notes");
      // A block with its own provider is not stored under a key: it takes no part.
      const provided = Session.create(store)
        .forSession("team_a")
        .withContext("notes", { provider: { get: async () => "mine" } })
        .withContext("notes_team");
      await provided.ready();
      // The unnamed session stores a block under its label: "notes_x" there is "notes" of session "x".
      const x = Session.create(store).forSession("x").withContext("notes").withContext("notes_x");
      await assert.rejects(x.ready(), { code: "INVALID_ARGUMENT", message: /block "notes_x" of session ""/ });
    });

    test("a manager refuses to create such a session, and deleting another leaves every other session's block", async () => {
      const store = backend.create();
      const manager = SessionManager.create(store).withContext("memory").withContext("memory_user");
      await assert.rejects(manager.create("B", { id: "user_1" }), { code: "INVALID_ARGUMENT" });
      assert.equal(await manager.get("user_1"), null);
      await manager.create("A", { id: "1" });
      await manager.create("C", { id: "team_1" });
      await manager.getSession("team_1").replaceContextBlock("memory", "team_1's memory");
      await manager.getSession("1").replaceContextBlock("memory_user", "1's user memory");
      await manager.delete("1");
      assert.equal(await store.blocks.getBlock("memory_team_1"), "team_1's memory");
      assert.equal(await store.blocks.getBlock("memory_user_1"), null);
    });
  });
}
