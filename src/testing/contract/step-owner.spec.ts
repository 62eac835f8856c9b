import assert from "node:assert/strict";
import { StoreSessionStorage } from "../../agent/storage/store.js";
import type { AgentCapableStore } from "../../agent/storage/store-writes.js";
import type { AgentMessage } from "../../agent/types.js";
import { hasContextStorage } from "../../contract/context.js";
import type { RegistryCapableStore, SessionInfo } from "../../contract/registry.js";
import { hasStepWrites, type StepCapableStore, type StepWrite } from "../../contract/step.js";
import type { SessionManager } from "../../manager/manager.js";
import type { ContractTest, Suite } from "../runner.js";
import { entry, sampleMessages, sampleState } from "../storage/fixtures.js";
import { type ContractTarget, ids, msg, rejectsWithCode } from "./harness.js";
import { withManager } from "./manager-harness.js";

type StepStore = RegistryCapableStore & StepCapableStore;

const USAGE = { inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0.5 };

/** Runs `body` on a store that writes steps (skipped on one without). */
function withSteps(
  t: ContractTest,
  target: ContractTarget,
  body: (store: StepStore, manager: SessionManager) => Promise<void>,
): Promise<void> {
  return withManager(t, target, async (manager, store) => {
    if (!hasStepWrites(store)) return t.skip("this store has no step writes");
    await body(store, manager);
  });
}

/** What a step may not change in a session it is refused: its messages, counters and activity. */
async function snapshot(store: StepStore, id: string) {
  const info = (await store.registry.get(id)) as SessionInfo;
  const { input_tokens, estimated_cost, updated_at } = info;
  return { ids: ids(await store.session(id).getHistory()), input_tokens, estimated_cost, updated_at };
}

/**
 * A step's owner guard (StepWrite.owner) is checked in the step's own transaction: another owner's session, an
 * unowned or an unknown one is `NOT_FOUND` and nothing is written, on every path a backend writes a step by.
 */
export function stepOwnerSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("Step owner guard", () => {
    test("a step guarded by an owner writes only into that owner's session", (t) =>
      withSteps(t, target, async (store, manager) => {
        const alice = await manager.create("alice's", { owner: "alice" });
        const bob = await manager.create("bob's", { owner: "bob" });
        const nobody = await manager.create("nobody's");
        for (const id of [bob.id, nobody.id]) await store.session(id).appendMessage(msg(`${id}-1`));
        // One message after the leaf (Postgres: one statement), a chain with a block (one transaction), a block
        // alone, and a message stored already (its usage still goes to the registry row).
        const steps = (id: string): Omit<StepWrite, "sessionId">[] => [
          { messages: [msg("s1")], parentId: undefined, guard: true, usage: USAGE },
          {
            messages: [msg("s2"), msg("s3")],
            parentId: undefined,
            guard: false,
            block: { key: "k", content: "c" },
          },
          {
            messages: [],
            parentId: undefined,
            guard: false,
            block: { key: "k", content: "c" },
            usage: USAGE,
          },
          { messages: [msg(`${id}-1`)], parentId: undefined, guard: false, usage: USAGE },
        ];
        for (const id of [bob.id, nobody.id, "no-such-session"]) {
          const before = id === "no-such-session" ? undefined : await snapshot(store, id);
          for (const step of steps(id)) {
            await rejectsWithCode(store.writeStep({ ...step, sessionId: id, owner: "alice" }), "NOT_FOUND");
          }
          if (before) assert.deepEqual(await snapshot(store, id), before, `${id} is untouched`);
          else assert.deepEqual(await store.session(id).getHistory(), []);
        }
        if (hasContextStorage(store))
          assert.equal(await store.blocks.getBlock("k"), null, "no block was set");
        await rejectsWithCode(
          store.writeStep({ ...steps(alice.id)[0]!, sessionId: alice.id, owner: "bad\nowner" }),
          "INVALID_ARGUMENT",
          { path: "owner", rule: "format" },
        );
        for (const step of steps(alice.id).slice(0, 2)) {
          await store.writeStep({ ...step, sessionId: alice.id, owner: "alice" });
        }
        assert.deepEqual(ids(await store.session(alice.id).getHistory()), ["s1", "s2", "s3"]);
        assert.equal((await store.registry.get(alice.id))?.input_tokens, 7);
      }));

    test("an agent append whose session was erased and registered to another owner meanwhile writes nothing", (t) =>
      withSteps(t, target, async (store) => {
        if (!hasContextStorage(store)) return t.skip("agent storage needs context blocks");
        const agents = store as AgentCapableStore;
        const alice = new StoreSessionStorage(agents).forOwner("alice");
        // Another process's storage: its writes do not wait for alice's in-process lock.
        const other = new StoreSessionStorage(agents);
        const state = sampleState({ id: "shared" });
        await alice.create(state);
        const bobState = sampleState({ id: "shared", messages: sampleMessages("b") });
        const { registry } = store;
        const get = registry.get.bind(registry);
        let armed = true;
        // Between alice's owner check and her step, the id is erased and created again as bob's.
        registry.get = async (id: string) => {
          const info = await get(id);
          if (armed && id === "shared") {
            armed = false;
            await other.delete("shared");
            await other.forOwner("bob").create(bobState);
          }
          return info;
        };
        const added = { id: "late", role: "assistant", content: "alice's", createdAt: 9 } as AgentMessage;
        try {
          await rejectsWithCode(
            alice.appendMessages("shared", [added], { updatedAt: 9, usage: [entry(9)] }),
            "NOT_FOUND",
          );
        } finally {
          registry.get = get;
        }
        assert.equal(armed, false, "the session was re-registered between the check and the step");
        const bobs = await other.forOwner("bob").load("shared");
        assert.deepEqual(
          bobs?.messages.map((m) => m.id),
          bobState.messages.map((m) => m.id),
        );
        assert.equal(await store.session("shared").getMessage("late"), null);
        const info = await store.registry.get("shared");
        assert.equal(info?.owner, "bob");
        assert.equal(info?.input_tokens, bobState.usage.inputTokens, "bob's counters only");
      }));
  });
}
