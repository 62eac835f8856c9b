import type { ContextCapableStore } from "../../src/contract/context.js";
import type { SessionMessage } from "../../src/contract/message.js";
import { MemoryStore } from "../../src/memory/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

/** The backends every context behaviour is tested on. */
export const contextBackends: { name: string; create(): ContextCapableStore }[] = [
  { name: "memory", create: () => new MemoryStore() },
  { name: "sqlite", create: () => new SqliteStore(":memory:") },
  { name: "sql-tag", create: () => new SqliteStore(sqlTagAgent()) },
];

/** An in-memory skill provider that records calls. */
export function memorySkills(initial: Record<string, { content: string; description?: string }> = {}) {
  const docs = new Map(Object.entries(initial));
  const calls: string[] = [];
  return {
    docs,
    calls,
    init(label: string) {
      calls.push(`init:${label}`);
    },
    async get() {
      calls.push("get");
      if (docs.size === 0) return null;
      return [...docs.entries()]
        .map(([k, v]) => (v.description ? `- ${k}: ${v.description}` : `- ${k}`))
        .join("\n");
    },
    async load(key: string) {
      return docs.get(key)?.content ?? null;
    },
    async set(key: string, content: string, description?: string) {
      docs.set(key, description === undefined ? { content } : { content, description });
    },
  };
}

/** The assistant turn of a model's `load_context` call as the AI SDK stores it (a static tool part, call "c1"). */
export function loadContextTurn(id: string, key: string, output: string, label = "skills"): SessionMessage {
  return {
    id,
    role: "assistant",
    parts: [
      {
        type: "tool-load_context",
        toolCallId: "c1",
        state: "output-available",
        input: { label, key },
        output,
      },
    ],
  };
}
