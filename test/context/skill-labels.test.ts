// Block labels and skill keys may both hold ":": the skills of block "a" and of block "a:b" stay apart in the tracker
// (a load, an unload and a block's removal touch only their own block), live and after a restart.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Session } from "../../src/session/session.js";
import { contextBackends, loadContextTurn, memorySkills } from "./backends.js";

const sorted = (keys: Set<string>) => [...keys].sort();

for (const backend of contextBackends) {
  describe(`skills of labels that hold ":" (${backend.name})`, () => {
    /** Block "a" holds key "b:c", block "a:b" holds key "c": both are written "a:b:c" as `label:key`. */
    function open(store: ReturnType<typeof backend.create>) {
      return Session.create(store.session("s"))
        .withContext("a", { provider: memorySkills({ "b:c": { content: "doc of a" } }) })
        .withContext("a:b", { provider: memorySkills({ c: { content: "doc of a:b" } }) });
    }

    test("unloading one skill keeps the other, live and after a restart", async () => {
      const store = backend.create();
      try {
        const s = open(store);
        const tools = await s.tools();
        const load = tools.load_context!.execute!;
        const unload = tools.unload_context!.execute!;
        const options = { toolCallId: "x", messages: [] };
        assert.equal(await load({ label: "a", key: "b:c" }, options), "doc of a");
        assert.equal(await load({ label: "a:b", key: "c" }, options), "doc of a:b");
        // Both are stored as the model's tool results, then one is unloaded.
        await store.session("s").appendMessage(loadContextTurn("m1", "b:c", "doc of a", "a"));
        await store.session("s").appendMessage(loadContextTurn("m2", "c", "doc of a:b", "a:b"));
        assert.match(String(await unload({ label: "a:b", key: "c" }, options)), /^Unloaded "c" from a:b/);
        assert.equal(await s.unloadSkill("a", "b:c"), true, "block a's skill is still loaded");
        // Reload a's skill, then check a new Session over the same history agrees.
        await store.session("s").appendMessage(loadContextTurn("m3", "b:c", "doc of a", "a"));
        assert.deepEqual(sorted(await open(store).getLoadedSkillKeys()), ["a:b:c"]);
      } finally {
        await store.close();
      }
    });

    test("removing block a forgets a's skills only", async () => {
      const store = backend.create();
      try {
        await store.session("s").appendMessage(loadContextTurn("m1", "b:c", "doc of a", "a"));
        await store.session("s").appendMessage(loadContextTurn("m2", "c", "doc of a:b", "a:b"));
        const s = open(store);
        await s.ready();
        assert.equal(s.removeContext("a"), true);
        // The skill of "a:b" is still loaded: its unload succeeds.
        assert.equal(await s.unloadSkill("a:b", "c"), true);
      } finally {
        await store.close();
      }
    });
  });
}
