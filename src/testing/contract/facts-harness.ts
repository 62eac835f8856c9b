// What the fact specs share: a store with facts (skipped without), its registry when owners are needed, a fact.
import assert from "node:assert/strict";
import { type FactCapableStore, type FactSource, hasFactStore, type NewFact } from "../../contract/facts.js";
import { hasSessionRegistry, type RegistryCapableStore } from "../../contract/registry.js";
import type { ContractTest } from "../runner.js";
import { type ContractTarget, msg, withStore } from "./harness.js";

/** Runs `body` with a fresh store that keeps facts; skips the test when the backend has none. */
export function withFacts(
  t: ContractTest,
  target: ContractTarget,
  body: (store: FactCapableStore) => Promise<void>,
): Promise<void> {
  return withStore(target, async (store) => {
    if (!hasFactStore(store)) return t.skip("no fact store");
    await body(store);
  });
}

/** {@link withFacts} with a session registry too (owners' facts need their sessions registered). */
export function withOwnedFacts(
  t: ContractTest,
  target: ContractTarget,
  body: (store: FactCapableStore & RegistryCapableStore) => Promise<void>,
): Promise<void> {
  return withFacts(t, target, async (store) => {
    if (!hasSessionRegistry(store)) return t.skip("no session registry: owners' facts need one");
    await body(store as FactCapableStore & RegistryCapableStore);
  });
}

/** Registers session `id` for `owner` and appends messages `<id>-0 … <id>-(n-1)` with the given texts. */
export async function ownedSession(
  store: FactCapableStore & RegistryCapableStore,
  id: string,
  owner: string | null,
  texts: readonly string[] = ["a message"],
): Promise<void> {
  await store.registry.create({ id, name: id, owner });
  const provider = store.session(id);
  for (const [i, text] of texts.entries()) await provider.appendMessage(msg(`${id}-${i}`, text));
}

/** Appends messages of the given ids to a session: a fact's sources must be stored messages. */
export async function storedMessages(
  store: FactCapableStore,
  sessionId: string,
  ids: readonly string[],
): Promise<void> {
  const provider = store.session(sessionId);
  for (const id of ids) await provider.appendMessage(msg(id, `message ${id}`));
}

/** A new fact of `text` from the given `[sessionId, messageId]` sources. */
export function fact(
  text: string,
  sources: readonly [string, string][],
  extra: Partial<NewFact> = {},
): NewFact {
  return {
    text,
    observedAt: 1_700_000_000_000,
    sources: sources.map(([sessionId, messageId]): FactSource => ({ sessionId, messageId })),
    producer: "function:contract",
    ...extra,
  };
}

/**
 * Alice's four facts, sourced in her sessions a1 and a2 (messages `a1-0`, `a1-1`, `a2-0`, `a2-1`): "paris" superseded by
 * "boston", "dog" from a2 alone, "both" from each session.
 */
export async function addAliceFacts(store: FactCapableStore): Promise<void> {
  const alice = { owner: "alice" };
  await store.facts.add(alice, [
    fact("Alice lives in Paris.", [["a2", "a2-0"]], { id: "paris" }),
    fact("Alice has a dog.", [["a2", "a2-1"]], { id: "dog" }),
    fact(
      "Alice likes tea and dogs.",
      [
        ["a1", "a1-1"],
        ["a2", "a2-1"],
      ],
      { id: "both" },
    ),
    fact("Alice moved to Boston.", [["a1", "a1-0"]], { id: "boston" }),
  ]);
  assert.equal(await store.facts.supersede(alice, "paris", "boston"), true);
}
