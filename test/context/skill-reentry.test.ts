// A skill provider's load() may call back into its session and add a skill block, whose skills are then restored. A
// restore waits for the loads in flight of its own block only, so such a load does not wait for itself, and later
// calls still run.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Session } from "../../src/session/session.js";
import { contextBackends, loadContextTurn } from "./backends.js";

/** A skill provider listing `keys`; `onLoad` runs inside load() before it answers. */
function skills(keys: string[], onLoad: (key: string) => Promise<void> = async () => {}) {
  return {
    async get() {
      return keys.map((key) => `- ${key}`).join("\n");
    },
    async load(key: string) {
      await onLoad(key);
      return keys.includes(key) ? `doc ${key}` : null;
    },
    async set() {},
  };
}

/** `promise`, or a rejection when it has not settled within 5 s (a deadlock would never settle). */
function settles<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} never settled (a reset waiting for itself)`)), 5_000);
  });
  return Promise.race([promise, stuck]).finally(() => clearTimeout(timer));
}

const options = { toolCallId: "x", messages: [] };

for (const backend of contextBackends) {
  describe(`skill loads that call back into the session (${backend.name})`, () => {
    test("a load() that adds another skill block completes, and later calls run", async () => {
      const store = backend.create();
      try {
        await store.session("s").appendMessage(loadContextTurn("m1", "kept", "doc kept", "more"));
        let s!: Session;
        const provider = skills(["review", "deploy"], async (key) => {
          if (key === "review") await s.addContext("more", { provider: skills(["kept"]) });
        });
        s = Session.create(store.session("s")).withContext("skills", { provider });
        const tools = await s.tools();
        const load = tools.load_context!.execute!;
        assert.equal(
          await settles(load({ label: "skills", key: "review" }, options), "the load"),
          "doc review",
        );
        assert.equal(
          await settles(load({ label: "skills", key: "deploy" }, options), "a later load"),
          "doc deploy",
        );
        // The added block's skill came back from the history; the loads are tracked.
        assert.deepEqual([...(await s.getLoadedSkillKeys())].sort(), [
          "more:kept",
          "skills:deploy",
          "skills:review",
        ]);
      } finally {
        await store.close();
      }
    });

    test("two loads in parallel, each adding a block, both complete", async () => {
      const store = backend.create();
      try {
        let s!: Session;
        const adding = (label: string) => async () => {
          // Both loads are running before either adds its block.
          await new Promise((resolve) => setTimeout(resolve, 20));
          await s.addContext(label, { provider: skills(["x"]) });
        };
        s = Session.create(store.session("s"))
          .withContext("one", { provider: skills(["a"], adding("one-more")) })
          .withContext("two", { provider: skills(["b"], adding("two-more")) });
        const load = (await s.tools()).load_context!.execute!;
        const both = Promise.all([
          load({ label: "one", key: "a" }, options),
          load({ label: "two", key: "b" }, options),
        ]);
        assert.deepEqual(await settles(both, "the two loads"), ["doc a", "doc b"]);
      } finally {
        await store.close();
      }
    });
  });
}
