import assert from "node:assert/strict";
import { test } from "node:test";
import type { ContextCapableStore } from "../../src/contract/context.js";
import { AgentSearchProvider, MemoryStore, Session, SqliteStore } from "../../src/index.js";
import { estimateStringTokens } from "../../src/message/tokens.js";
import { rng } from "../helpers/rng.js";
import { memorySkills } from "./backends.js";

const LABELS = ["memory", "notes", "soul", "skills", "kb", "ghost", "", "MEMORY", "__proto__", "constructor"];
const WORDS = [
  "deploy",
  "═".repeat(46),
  "AND",
  "OR",
  '"',
  "*",
  "(",
  "NEAR",
  "🚀",
  "日本語",
  "\u0000",
  "\n",
  "x".repeat(50),
];

function value(random: () => number, depth = 0): unknown {
  const pick = Math.floor(random() * 12);
  switch (pick) {
    case 0:
      return null;
    case 1:
      return undefined;
    case 2:
      return Math.floor(random() * 1e6) * (random() < 0.5 ? -1 : 1);
    case 3:
      return random() < 0.5;
    case 4:
      return LABELS[Math.floor(random() * LABELS.length)];
    case 5:
      return "x".repeat(Math.floor(random() * 20_000));
    case 6:
      return depth < 3 ? [value(random, depth + 1), value(random, depth + 1)] : [];
    case 7:
      return depth < 3 ? { title: value(random, depth + 1), description: value(random, depth + 1) } : {};
    default: {
      const n = Math.floor(random() * 12);
      return Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");
    }
  }
}

function input(random: () => number): unknown {
  if (random() < 0.05) return value(random);
  const out: Record<string, unknown> = {};
  for (const field of ["label", "content", "action", "metadata", "key", "query"]) {
    if (random() < 0.8)
      out[field] = field === "label" && random() < 0.7 ? LABELS[Math.floor(random() * 5)] : value(random);
  }
  return out;
}

for (const [name, create] of [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
] as const) {
  test(`fuzz (${name}): thousands of random tool inputs never throw and blocks stay within maxTokens`, async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const store: ContextCapableStore = create();
      let flaky = 0;
      const session = Session.create(store)
        .withContext("soul", { provider: { get: async () => "fixed" } })
        .withContext("memory", { maxTokens: 200 })
        .withContext("notes", { maxTokens: 30, description: "Short notes" })
        .withContext("skills", { provider: memorySkills({ a: { content: "A" } }) })
        .withContext("kb", { provider: new AgentSearchProvider(store) })
        .withContext("flaky", {
          provider: {
            get: async () => "flaky",
            set: async () => {
              flaky++;
              if (flaky % 2 === 0) throw new Error("provider down");
            },
          },
        });
      const tools = await session.tools();
      const names = Object.keys(tools);
      assert.deepEqual(names.sort(), ["load_context", "search_context", "set_context", "unload_context"]);
      const random = rng(name === "memory" ? 1 : 2);
      for (let i = 0; i < 3000; i++) {
        const tool = tools[names[i % names.length]!]!;
        const result = await tool.execute(input(random));
        assert.equal(typeof result, "string", `call ${i} returned ${typeof result}`);
      }
      assert.equal(
        await tools.set_context!.execute({ label: "flaky", content: "a" }),
        "Written to flaky. Usage: 2 tokens",
      );
      assert.equal(
        await tools.set_context!.execute({ label: "flaky", content: "a" }),
        "Error: provider down",
      );
      for (const block of session.getContextBlocks()) {
        if (block.maxTokens)
          assert.ok(block.tokens <= block.maxTokens, `${block.label}: ${block.tokens} > ${block.maxTokens}`);
      }
      for (const label of ["memory", "notes"]) {
        const stored = (await store.blocks.getBlock(label)) ?? "";
        const max = label === "memory" ? 200 : 30;
        assert.ok(estimateStringTokens(stored) <= max, `stored ${label} within budget`);
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
}
