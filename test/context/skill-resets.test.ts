// The tracker's resets against loads and unloads in flight: a restore waits for them (and holds later ones), and a
// removed block's load that was already running leaves nothing tracked; the tracker stays what a restart rebuilds.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionMessage } from "../../src/contract/message.js";
import type { SessionProvider } from "../../src/contract/provider.js";
import { Session } from "../../src/session/session.js";
import { contextBackends, loadContextTurn, memorySkills } from "./backends.js";

/** A promise and the function that resolves it. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/**
 * The provider with one history write (`updateMessage`) or one read of skill rows held when armed: the read is
 * done, only its answer waits (a read that saw the history before a write and returns after it).
 */
function holding(inner: SessionProvider) {
  const held = new Map<string, { started: () => void; release: Promise<void> }>();
  const provider = new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const name = property === "getToolMessages" ? "getMessage" : String(property);
        const gate = held.get(name);
        held.delete(name);
        if (gate && name === "updateMessage") {
          gate.started();
          await gate.release;
        }
        const result = await value.apply(target, args);
        if (gate && name !== "updateMessage") {
          gate.started();
          await gate.release;
        }
        return result;
      };
    },
  });
  /** Holds the next call of `what` ("updateMessage", or "getMessage": a read of skill rows). */
  const hold = (what: "updateMessage" | "getMessage") => {
    const started = latch();
    const release = latch();
    held.set(what, { started: started.open, release: release.opened });
    return { started: started.opened, release: release.open };
  };
  return { provider, hold };
}

const drain = () => new Promise<void>((resolve) => setImmediate(resolve));
const sorted = (keys: Set<string>) => [...keys].sort();
const deploy = { label: "skills", key: "deploy" };

function stepTurn(id: string, tool: string, output: string): SessionMessage {
  return {
    id,
    role: "assistant",
    parts: [
      { type: `tool-${tool}`, toolCallId: `${id}-c`, state: "output-available", input: deploy, output },
    ],
  };
}

for (const backend of contextBackends) {
  describe(`skill tracker resets against calls in flight (${backend.name})`, () => {
    /** A session whose history loaded "deploy" before it was opened. */
    async function setup() {
      const store = backend.create();
      await store.session("s").appendMessage(loadContextTurn("a1", "deploy", "Run make deploy."));
      const { provider, hold } = holding(store.session("s"));
      const skills = () => memorySkills({ deploy: { content: "Run make deploy." } });
      const s = Session.create(provider).withContext("skills", { provider: skills() });
      const tools = await s.tools();
      assert.deepEqual(sorted(await s.getLoadedSkillKeys()), ["skills:deploy"]);
      const restored = async () =>
        sorted(
          await Session.create(store.session("s"))
            .withContext("skills", { provider: skills() })
            .getLoadedSkillKeys(),
        );
      return { s, tools, hold, restored };
    }

    test("a restore that read the history before an unload's write does not load the skill again", async () => {
      const { s, tools, hold, restored } = await setup();
      const write = hold("updateMessage");
      const unloading = tools.unload_context!.execute(deploy);
      await write.started;
      // Adding a skill block restores from the history; its read is answered only after the unload ended.
      const read = hold("getMessage");
      const adding = s.addContext("docs", { provider: memorySkills() });
      await drain();
      write.release();
      const unloaded = await unloading;
      await drain();
      read.release();
      await adding;
      assert.equal(unloaded, 'Unloaded "deploy" from skills. Context reclaimed.');
      await s.appendMessage(stepTurn("a2", "unload_context", unloaded));
      assert.deepEqual(sorted(await s.getLoadedSkillKeys()), []);
      assert.deepEqual(await restored(), []);
    });

    test("an unload called while a restore reads waits for it and finds the skill loaded", async () => {
      const { s, tools, hold, restored } = await setup();
      const read = hold("getMessage");
      const adding = s.addContext("docs", { provider: memorySkills() });
      await read.started;
      const unloading = tools.unload_context!.execute(deploy);
      await drain();
      read.release();
      await adding;
      const unloaded = await unloading;
      assert.equal(unloaded, 'Unloaded "deploy" from skills. Context reclaimed.');
      await s.appendMessage(stepTurn("a2", "unload_context", unloaded));
      assert.deepEqual(sorted(await s.getLoadedSkillKeys()), []);
      assert.deepEqual(await restored(), []);
    });

    test("a load still running when its block is removed leaves nothing tracked", async () => {
      const store = backend.create();
      const skills = memorySkills({ review: { content: "Read the diff." } });
      const loading = latch();
      const answer = latch();
      const load = skills.load;
      skills.load = async (key: string) => {
        loading.open();
        await answer.opened;
        return load(key);
      };
      const s = Session.create(store.session("s")).withContext("skills", { provider: skills });
      const tools = await s.tools();
      const running = tools.load_context!.execute({ label: "skills", key: "review" });
      await loading.opened;
      assert.equal(s.removeContext("skills"), true);
      answer.open();
      assert.equal(await running, "Read the diff.");
      await drain();
      assert.deepEqual(sorted(await s.getLoadedSkillKeys()), []);
    });
  });
}
