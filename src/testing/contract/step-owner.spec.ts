import assert from "node:assert/strict";
import { StoreSessionStorage } from "../../agent/storage/store.js";
import type { AgentCapableStore } from "../../agent/storage/store-writes.js";
import type { AgentMessage, SessionState } from "../../agent/types.js";
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
  return { history: await store.session(id).getHistory(), input_tokens, estimated_cost, updated_at };
}

/** Runs `body` with alice's owner-scoped agent storage and another process's unscoped one over the same store. */
function withAgents(
  t: ContractTest,
  target: ContractTarget,
  body: (store: AgentCapableStore, alice: StoreSessionStorage, other: StoreSessionStorage) => Promise<void>,
): Promise<void> {
  return withSteps(t, target, async (store) => {
    if (!hasContextStorage(store)) return t.skip("agent storage needs context blocks");
    const agents = store as AgentCapableStore;
    // Another process's storage: its writes do not wait for alice's in-process lock.
    await body(agents, new StoreSessionStorage(agents).forOwner("alice"), new StoreSessionStorage(agents));
  });
}

/**
 * Runs `act` with the store's registry hooked so that, right after the first read of the row "shared" (the owner
 * check), the id is erased and created again as bob's (`bobState`), before anything of `act` is written.
 */
async function reRegisteredMeanwhile(
  store: AgentCapableStore,
  other: StoreSessionStorage,
  bobState: SessionState,
  act: () => Promise<void>,
): Promise<void> {
  const { registry } = store;
  const get = registry.get.bind(registry);
  let armed = true;
  registry.get = async (id: string) => {
    const info = await get(id);
    if (armed && id === "shared") {
      armed = false;
      await other.delete("shared");
      await other.forOwner("bob").create(bobState);
    }
    return info;
  };
  try {
    await act();
  } finally {
    registry.get = get;
  }
  assert.equal(armed, false, "the session was re-registered between the check and the write");
}

/** The session "shared" is bob's, with `bobState`'s messages and counters only. */
async function assertBobs(store: AgentCapableStore, other: StoreSessionStorage, bobState: SessionState) {
  const bobs = await other.forOwner("bob").load("shared");
  assert.deepEqual(
    bobs?.messages.map((m) => m.id),
    bobState.messages.map((m) => m.id),
  );
  const info = await store.registry.get("shared");
  assert.equal(info?.owner, "bob");
  assert.equal(info?.input_tokens, bobState.usage.inputTokens, "bob's counters only");
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
        // alone, a message stored already (its usage still goes to the registry row), a stored message rewritten
        // in place, and one deleted.
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
          {
            messages: [],
            parentId: undefined,
            guard: false,
            replace: [msg(`${id}-1`, "alice's")],
            usage: USAGE,
          },
          { messages: [], parentId: undefined, guard: false, remove: [`${id}-1`] },
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

    test("a step that rewrites and deletes messages writes all of it or nothing, and appends none", (t) =>
      withSteps(t, target, async (store, manager) => {
        const { id } = await manager.create("alice's", { owner: "alice" });
        const guarded = { sessionId: id, parentId: undefined, guard: false, owner: "alice" };
        await store.writeStep({ ...guarded, messages: [msg("s1"), msg("s2"), msg("s3")], parentId: null });
        const before = await snapshot(store, id);
        // A message that is not stored refuses the whole step: the rewrite before it and the deletion roll back.
        await rejectsWithCode(
          store.writeStep({
            ...guarded,
            messages: [],
            replace: [msg("s1", "new"), msg("gone")],
            remove: ["s3"],
          }),
          "NOT_FOUND",
        );
        assert.deepEqual((await snapshot(store, id)).history, before.history);
        await rejectsWithCode(
          store.writeStep({ ...guarded, messages: [msg("s4")], remove: ["s3"] }),
          "INVALID_ARGUMENT",
          { path: "messages", rule: "conflict" },
        );
        await store.writeStep({
          ...guarded,
          messages: [],
          replace: [msg("s2", "new"), msg("s1")],
          remove: ["s3", "never-stored"],
          usage: USAGE,
        });
        const history = await store.session(id).getHistory();
        assert.deepEqual(ids(history), ["s1", "s2"]);
        assert.deepEqual(history[1]?.parts, msg("s2", "new").parts);
        assert.deepEqual(history[0], before.history[0], "an identical rewrite leaves the message as it was");
        assert.equal((await store.registry.get(id))?.input_tokens, 7);
      }));

    test("an agent append whose session was erased and registered to another owner meanwhile writes nothing", (t) =>
      withAgents(t, target, async (store, alice, other) => {
        await alice.create(sampleState({ id: "shared" }));
        const bobState = sampleState({ id: "shared", messages: sampleMessages("b") });
        const added = { id: "late", role: "assistant", content: "alice's", createdAt: 9 } as AgentMessage;
        await reRegisteredMeanwhile(store, other, bobState, () =>
          rejectsWithCode(
            alice.appendMessages("shared", [added], { updatedAt: 9, usage: [entry(9)] }),
            "NOT_FOUND",
          ),
        );
        assert.equal(await store.session("shared").getMessage("late"), null);
        await assertBobs(store, other, bobState);
      }));

    test("an agent save whose session was erased and registered to another owner meanwhile writes nothing", (t) =>
      withAgents(t, target, async (store, alice, other) => {
        await alice.create(sampleState({ id: "shared" }));
        // Bob's session holds the ids alice's save keeps (rewritten in place) and drops (deleted): none may change.
        const bobMessages = sampleMessages().map((m) => ({ ...m, metadata: { owner: "bob" } }));
        const bobState = sampleState({ id: "shared", messages: bobMessages });
        const [first, second] = sampleMessages();
        const edited = { ...first!, content: "alice's edit" } as AgentMessage;
        const saved = sampleState({ id: "shared", messages: [edited, second!] });
        await reRegisteredMeanwhile(store, other, bobState, () =>
          rejectsWithCode(alice.save(saved), "NOT_FOUND"),
        );
        await assertBobs(store, other, bobState);
        const bobs = await other.forOwner("bob").load("shared");
        assert.deepEqual(bobs?.messages, bobState.messages, "bob's messages are unchanged");
      }));

    test("an agent delete whose session was erased and registered to another owner meanwhile removes nothing", (t) =>
      withAgents(t, target, async (store, alice, other) => {
        await alice.create(sampleState({ id: "shared" }));
        const bobState = sampleState({
          id: "shared",
          messages: sampleMessages().map((m) => ({ ...m, id: `b-${m.id}` })),
        });
        await reRegisteredMeanwhile(store, other, bobState, () => alice.delete("shared"));
        await assertBobs(store, other, bobState);
        await alice.delete("shared");
        await assertBobs(store, other, bobState);
      }));
  });
}
