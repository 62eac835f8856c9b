// Parallel load_context / unload_context calls on one skill (the AI SDK runs a step's tool calls concurrently): the
// loaded set a Session tracks must equal what a restart rebuilds from the history, whatever the interleaving.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SkillTracker } from "../../src/context/skills.js";
import type { ContextCapableStore } from "../../src/contract/context.js";
import type { SessionMessage } from "../../src/contract/message.js";
import type { SessionProvider } from "../../src/contract/provider.js";
import { Session } from "../../src/session/session.js";
import { contextBackends, loadContextTurn, memorySkills } from "./backends.js";

type Call = { tool: "load_context" | "unload_context"; key: string; output: string };

/** The assistant turn of one model step with these tool calls, in call order (as the AI SDK stores it). */
function stepTurn(id: string, calls: Call[]): SessionMessage {
  return {
    id,
    role: "assistant",
    parts: calls.map(({ tool, key, output }, i) => ({
      type: `tool-${tool}`,
      toolCallId: `${id}-c${i}`,
      state: "output-available",
      input: { label: "skills", key },
      output,
    })),
  };
}

/**
 * A session provider whose history writes (`updateMessage`) can be held open, and a log of the writes and the
 * skill loads in the order they happen: it forces a load to land while an unload's write is in flight.
 */
function gated(inner: SessionProvider, log: string[]) {
  let gate: { entered: () => void; open: Promise<void> } | undefined;
  let failNext = false;
  const provider = new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property !== "updateMessage") return typeof value === "function" ? value.bind(target) : value;
      return async (message: SessionMessage) => {
        log.push("write");
        const held = gate;
        gate = undefined;
        if (held) {
          held.entered();
          await held.open;
        }
        if (failNext) {
          failNext = false;
          throw new Error("transient write failure");
        }
        await inner.updateMessage(message);
        log.push("written");
      };
    },
  });
  return {
    provider,
    /** Holds the next history write; `entered` resolves once it started, `release` lets it go on. */
    hold() {
      let entered!: () => void;
      let release!: () => void;
      const started = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const open = new Promise<void>((resolve) => {
        release = resolve;
      });
      gate = { entered, open };
      return { started, release };
    },
    failNextWrite() {
      failNext = true;
    },
  };
}

// Lets every ready microtask run: a load that does not wait for the unload (the memory skill provider answers in
// microtasks) has finished by then; one queued behind the held write has not started.
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

const sorted = (keys: Set<string>) => [...keys].sort();

for (const backend of contextBackends) {
  describe(`parallel skill tool calls keep the tracker equal to the history (${backend.name})`, () => {
    /** A session with "deploy" loaded by an earlier step, and its tools. */
    async function setup(store: ContextCapableStore, log: string[]) {
      const writes = gated(store.session("s"), log);
      const skills = memorySkills({
        deploy: { content: "Run make deploy." },
        review: { content: "Read the diff." },
      });
      const load = skills.load;
      skills.load = async (key: string) => {
        log.push(`load:${key}`);
        return load(key);
      };
      const s = Session.create(writes.provider).withContext("skills", { provider: skills });
      const tools = await s.tools();
      const output = await tools.load_context!.execute({ label: "skills", key: "deploy" });
      await s.appendMessage(loadContextTurn("a1", "deploy", output));
      log.length = 0;
      const restored = async () =>
        sorted(
          await Session.create(store.session("s"))
            .withContext("skills", { provider: memorySkills() })
            .getLoadedSkillKeys(),
        );
      return { s, tools, skills, writes, restored };
    }

    const unload = { label: "skills", key: "deploy" };

    test("unload then load: the load waits for the unload's write and stays loaded", async () => {
      const store = backend.create();
      const log: string[] = [];
      const { s, tools, writes, restored } = await setup(store, log);
      const held = writes.hold();
      const unloading = tools.unload_context!.execute(unload);
      const loading = tools.load_context!.execute(unload);
      await held.started;
      await drain();
      held.release();
      const [unloaded, loaded] = await Promise.all([unloading, loading]);
      assert.equal(unloaded, 'Unloaded "deploy" from skills. Context reclaimed.');
      assert.equal(loaded, "Run make deploy.");
      await s.appendMessage(
        stepTurn("a2", [
          { tool: "unload_context", key: "deploy", output: unloaded },
          { tool: "load_context", key: "deploy", output: loaded },
        ]),
      );
      assert.deepEqual(sorted(await s.getLoadedSkillKeys()), ["skills:deploy"]);
      assert.deepEqual(await restored(), ["skills:deploy"]);
      // In call order: the load started once the unload's write had finished.
      assert.deepEqual(log, ["write", "written", "load:deploy"]);
    });

    test("load then unload, load and load, unload and unload end where a restart does", async () => {
      const mixes: Call["tool"][][] = [
        ["load_context", "unload_context"],
        ["load_context", "load_context"],
        ["unload_context", "unload_context"],
      ];
      for (const tools of mixes) {
        const store = backend.create();
        const log: string[] = [];
        const ctx = await setup(store, log);
        const held = ctx.writes.hold();
        const running = tools.map((tool) => ctx.tools[tool]!.execute(unload));
        await drain();
        held.release();
        const outputs = await Promise.all(running);
        await ctx.s.appendMessage(
          stepTurn(
            "a2",
            tools.map((tool, i) => ({ tool, key: "deploy", output: outputs[i]! })),
          ),
        );
        const expected = tools[1] === "load_context" ? ["skills:deploy"] : [];
        assert.deepEqual(sorted(await ctx.s.getLoadedSkillKeys()), expected, tools.join(" + "));
        assert.deepEqual(await ctx.restored(), expected, tools.join(" + "));
        if (tools[0] === "unload_context") {
          // The second unload finds the skill unloaded: one history write, not two rewriting one load.
          assert.equal(outputs[1], 'Skill "deploy" is not currently loaded in "skills".');
          assert.deepEqual(log, ["write", "written"]);
        }
      }
    });

    test("a failed unload write or a failed load does not hold up the next call on the skill", async () => {
      const store = backend.create();
      const log: string[] = [];
      const { s, tools, skills, writes, restored } = await setup(store, log);
      writes.failNextWrite();
      const [failed, loaded] = await Promise.all([
        tools.unload_context!.execute(unload),
        tools.load_context!.execute(unload),
      ]);
      assert.match(failed, /^Error: .*transient write failure/);
      assert.equal(loaded, "Run make deploy.");
      const working = skills.load;
      skills.load = async () => assert.fail(new Error("provider down"));
      const [loadError, unloaded] = await Promise.all([
        tools.load_context!.execute(unload),
        tools.unload_context!.execute(unload),
      ]);
      skills.load = working;
      assert.match(loadError, /^Error: provider down/);
      assert.equal(unloaded, 'Unloaded "deploy" from skills. Context reclaimed.');
      await s.appendMessage(
        stepTurn("a2", [
          { tool: "unload_context", key: "deploy", output: failed },
          { tool: "load_context", key: "deploy", output: loaded },
          { tool: "load_context", key: "deploy", output: loadError },
          { tool: "unload_context", key: "deploy", output: unloaded },
        ]),
      );
      assert.deepEqual(sorted(await s.getLoadedSkillKeys()), []);
      assert.deepEqual(await restored(), []);
    });

    test("a load queued behind an unload answers for a block removed meanwhile, and tracks nothing", async () => {
      const store = backend.create();
      const { s, tools, writes } = await setup(store, []);
      const held = writes.hold();
      const unloading = tools.unload_context!.execute(unload);
      const loading = tools.load_context!.execute(unload);
      await held.started;
      assert.equal(s.removeContext("skills"), true);
      held.release();
      assert.match(await unloading, /^Unloaded/);
      assert.equal(await loading, 'Error: "skills" is not a skill block. Skill blocks: skills');
      assert.deepEqual(sorted(await s.getLoadedSkillKeys()), []);
    });

    test("another skill's load does not wait for an unload in flight", { timeout: 10_000 }, async () => {
      const store = backend.create();
      const log: string[] = [];
      const { s, tools, writes } = await setup(store, log);
      const held = writes.hold();
      const unloading = tools.unload_context!.execute(unload);
      await held.started;
      assert.equal(await tools.load_context!.execute({ label: "skills", key: "review" }), "Read the diff.");
      held.release();
      assert.match(await unloading, /^Unloaded/);
      assert.deepEqual(sorted(await s.getLoadedSkillKeys()), ["skills:review"]);
    });
  });
}

describe("SkillTracker.serialise", () => {
  test("runs one key's tasks in call order, passes failures on, and keeps no entry once they settle", async () => {
    const tracker = new SkillTracker();
    const order: string[] = [];
    let release!: () => void;
    const first = tracker.serialise("skills", "a", async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      order.push("a1");
      throw new Error("a1 failed");
    });
    const second = tracker.serialise("skills", "a", async () => {
      order.push("a2");
      return 2;
    });
    const other = tracker.serialise("skills", "b", async () => {
      order.push("b");
    });
    await other;
    assert.deepEqual(order, ["b"]);
    assert.equal(tracker.busy, 1);
    release();
    await assert.rejects(first, /a1 failed/);
    assert.equal(await second, 2);
    assert.deepEqual(order, ["b", "a1", "a2"]);
    assert.equal(tracker.busy, 0);
  });
});
