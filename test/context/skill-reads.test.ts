// Restoring and unloading skills read only the rows that call load_context / unload_context: a long session opens
// without fetching each of its assistant rows, and a provider without getToolMessages still restores the same set.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionMessage } from "../../src/contract/message.js";
import type { SessionProvider } from "../../src/contract/provider.js";
import { Session } from "../../src/session/session.js";
import { contextBackends, loadContextTurn, memorySkills } from "./backends.js";

/** The provider with a count of each method called, and optionally without getToolMessages (a user's own). */
function counting(inner: SessionProvider, withoutToolReads = false) {
  const calls = new Map<string, number>();
  const provider = new Proxy(inner, {
    get(target, property) {
      if (withoutToolReads && property === "getToolMessages") return undefined;
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.set(String(property), (calls.get(String(property)) ?? 0) + 1);
        return value.apply(target, args);
      };
    },
  });
  return { provider, count: (name: string) => calls.get(name) ?? 0 };
}

const TURNS = 300;

/** `TURNS` user/assistant exchanges; the assistant turns 10 and 200 load "deploy" and "review". */
async function longSession(provider: SessionProvider): Promise<void> {
  for (let i = 0; i < TURNS; i++) {
    await provider.appendMessage({
      id: `u${i}`,
      role: "user",
      parts: [{ type: "text", text: `question ${i}` }],
    });
    const answer: SessionMessage =
      i === 10
        ? loadContextTurn(`a${i}`, "deploy", "Run make deploy.")
        : i === 200
          ? loadContextTurn(`a${i}`, "review", "Read the diff.")
          : { id: `a${i}`, role: "assistant", parts: [{ type: "text", text: `answer ${i}` }] };
    await provider.appendMessage(answer);
  }
}

const skills = () =>
  memorySkills({ deploy: { content: "Run make deploy." }, review: { content: "Read the diff." } });

for (const backend of contextBackends) {
  describe(`skill restore and unload read only the skill rows (${backend.name})`, () => {
    test("opening a long session with two loads fetches no assistant row one by one", async () => {
      const store = backend.create();
      await longSession(store.session("s"));
      const { provider, count } = counting(store.session("s"));
      const s = Session.create(provider).withContext("skills", { provider: skills() });
      assert.deepEqual([...(await s.getLoadedSkillKeys())].sort(), ["skills:deploy", "skills:review"]);
      assert.equal(count("getMessage"), 0);
      assert.equal(count("getHistory"), 0);
      assert.equal(count("getToolMessages"), 1);
      assert.equal(
        (await store.session("s").getToolMessages!(["load_context", "unload_context"])).length,
        2,
        "the tool read returns the two loading rows only",
      );
    });

    test("an unload reads the load rows once and rewrites the newest load of its key", async () => {
      const store = backend.create();
      await longSession(store.session("s"));
      const { provider, count } = counting(store.session("s"));
      const s = Session.create(provider).withContext("skills", { provider: skills() });
      const tools = await s.tools();
      const before = count("getToolMessages");
      assert.match(await tools.unload_context!.execute({ label: "skills", key: "deploy" }), /^Unloaded/);
      assert.equal(count("getMessage"), 0);
      assert.equal(count("getToolMessages") - before, 1);
      assert.equal(count("updateMessage"), 1);
      const marked = (await store.session("s").getMessage("a10"))!.parts[0]!.output;
      assert.equal(marked, "[skill unloaded: deploy]");
      assert.deepEqual([...(await s.getLoadedSkillKeys())], ["skills:review"]);
    });

    test("a provider without getToolMessages restores and unloads the same way", async () => {
      const store = backend.create();
      await longSession(store.session("s"));
      const { provider, count } = counting(store.session("s"), true);
      const s = Session.create(provider).withContext("skills", { provider: skills() });
      assert.deepEqual([...(await s.getLoadedSkillKeys())].sort(), ["skills:deploy", "skills:review"]);
      assert.equal(count("getMessage"), TURNS);
      const tools = await s.tools();
      assert.match(await tools.unload_context!.execute({ label: "skills", key: "review" }), /^Unloaded/);
      // Newest first, the load of "review" is the 100th assistant row from the end.
      assert.equal(count("getMessage"), TURNS + TURNS - 200);
      assert.deepEqual([...(await s.getLoadedSkillKeys())], ["skills:deploy"]);
      const restored = Session.create(store.session("s")).withContext("skills", { provider: skills() });
      assert.deepEqual([...(await restored.getLoadedSkillKeys())], ["skills:deploy"]);
    });
  });
}
