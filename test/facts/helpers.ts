// What the learner's tests share: a memory store with sessions of plain text turns, and recording extractors; and
// a stored fact for the fusion's pure functions.
import type { Fact, LearnableMessage } from "../../src/contract/facts.js";
import type { ExtractedFact, ExtractInput } from "../../src/facts/types.js";
import { MemoryStore } from "../../src/memory/store.js";

/** Appends `texts` to `sessionId` as alternating user/assistant turns `${prefix}0`, `${prefix}1`, … */
export async function appendTurns(
  store: MemoryStore,
  sessionId: string,
  texts: readonly string[],
  prefix = "m",
): Promise<void> {
  const provider = store.session(sessionId);
  for (const [i, text] of texts.entries()) {
    await provider.appendMessage({
      id: `${prefix}${i}`,
      role: i % 2 === 0 ? "user" : "assistant",
      parts: [{ type: "text", text }],
    });
  }
}

/** A memory store whose sessions `owned` belong to `owner`. */
export async function storeWithOwner(owner: string, owned: readonly string[]): Promise<MemoryStore> {
  const store = new MemoryStore();
  for (const id of owned) await store.registry.create({ id, name: id, owner });
  return store;
}

/**
 * An extractor that learns one fact from each user message saying "I …" ("I live in Paris" → "user: I live in
 * Paris."), and records the batches it was given.
 */
export function sayingExtractor(calls: ExtractInput[] = []) {
  const extract = async (input: ExtractInput): Promise<ExtractedFact[]> => {
    calls.push(input);
    return input.messages
      .filter((m: LearnableMessage) => m.role === "user" && m.text.startsWith("I "))
      .map((m) => ({ text: `The user says: ${m.text}`, about: "user", sources: [m.id] }));
  };
  return { extract, calls };
}

/** A current fact of session `s` named `id` (its text too), sourced in the message `id`, about `about`. */
export function storedFact(id: string, about: string | null = null): Fact {
  return {
    id,
    text: id,
    about,
    observedAt: 0,
    sources: [{ sessionId: "s", messageId: id }],
    producer: "test",
    owner: null,
    sessionId: "s",
    status: "current",
    supersededBy: null,
    createdAt: 0,
  };
}
