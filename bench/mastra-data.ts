/** The thread and messages bench/mastra.ts and bench/mastra-bytes.ts save: one thread, agent turns of two messages. */
import { randomUUID } from "node:crypto";
import type { MastraDBMessage } from "@mastra/core/memory";
import type { MemoryStorage } from "@mastra/core/storage";
import { type MastraCapableStore, mastraStorage } from "../src/mastra/index.js";
import { makeText } from "./data.js";

const T0 = Date.parse("2025-01-01T00:00:00Z");

/** Saves the bench's thread (resource "bench-user") in `memory`. */
export async function saveBenchThread(memory: MemoryStorage, threadId: string): Promise<void> {
  await memory.saveThread({
    thread: {
      id: threadId,
      resourceId: "bench-user",
      title: "bench",
      createdAt: new Date(),
      updatedAt: new Date(),
    },
  });
}

/** Messages `i` and `i + 1` of the thread: a user's and an assistant's, 50 words each, a second apart. */
export function benchTurn(next: () => number, threadId: string, i: number): MastraDBMessage[] {
  return [i, i + 1].map((n) => {
    const text = makeText(next, 50);
    return {
      id: randomUUID(),
      threadId,
      resourceId: "bench-user",
      role: n % 2 === 0 ? "user" : "assistant",
      createdAt: new Date(T0 + n * 1000),
      content: { format: 2, parts: [{ type: "text", text }], content: text },
    } as MastraDBMessage;
  });
}

/** The memory domain of `store`'s Mastra storage, initialised, with a new bench thread saved in it. */
export async function benchThread(
  store: MastraCapableStore,
): Promise<{ memory: MemoryStorage; threadId: string }> {
  const storage = mastraStorage(store);
  await storage.init();
  const memory = (await storage.getStore("memory")) as MemoryStorage;
  const threadId = randomUUID();
  await saveBenchThread(memory, threadId);
  return { memory, threadId };
}
