import assert from "node:assert/strict";
import { test } from "node:test";
import { SessionError } from "../../src/errors.js";
import { MemoryStore } from "../../src/memory/store.js";
import { emitWarning } from "../../src/runtime/warn.js";
import { warningsOf } from "../helpers/warnings.js";

test("a warning carries its type as its name, the context before the message, and the error as its cause", async () => {
  const original = new SessionError("STORAGE", "disk full");
  const [plain] = await warningsOf("AgentSessionTestWarning", () =>
    emitWarning(original, "AgentSessionTestWarning"),
  );
  assert.equal(plain?.message, "disk full");
  assert.equal(plain?.cause, original);
  assert.equal(original.name, "SessionError", "the caller's error keeps its name");
  const [framed] = await warningsOf("AgentSessionTestWarning", () =>
    emitWarning(original, "AgentSessionTestWarning", "a hook threw"),
  );
  assert.equal(framed?.message, "a hook threw: disk full");
  const [text] = await warningsOf("AgentSessionTestWarning", () =>
    emitWarning("no error object", "AgentSessionTestWarning"),
  );
  assert.equal(text?.message, "no error object");
  assert.equal(text?.cause, undefined);
});

test("without process.emitWarning (a Worker) the warning goes to console.warn with its type", () => {
  const saved = process.emitWarning;
  const logged: unknown[][] = [];
  const savedWarn = console.warn;
  (process as { emitWarning?: unknown }).emitWarning = undefined;
  console.warn = (...args: unknown[]) => logged.push(args);
  try {
    emitWarning(new Error("boom"), "AgentSessionTestWarning", "while closing");
  } finally {
    process.emitWarning = saved;
    console.warn = savedWarn;
  }
  assert.deepEqual(logged, [["AgentSessionTestWarning: while closing: boom"]]);
});

test("without a handler, a failing listener and a failing embedder are warnings named by their source", async () => {
  const store = new MemoryStore({
    embedder: async () => {
      throw new Error("embedding service unavailable");
    },
  });
  try {
    let heard = false;
    store.subscribe(() => {
      heard = true;
      throw new Error("listener broke");
    });
    let feed: Error[] = [];
    // The embedder runs after the append has committed, in the background: both windows are open around it.
    const vectors = await warningsOf("AgentSessionVectorWarning", async () => {
      feed = await warningsOf("AgentSessionFeedWarning", async () => {
        const text = { type: "text" as const, text: "hi" };
        await store.session("s").appendMessage({ id: "m1", role: "user", parts: [text] });
        while (!heard) await new Promise((resolve) => setTimeout(resolve, 1));
      });
      await store.vectors?.idle();
    });
    assert.deepEqual(
      feed.map((w) => w.message),
      ["listener broke"],
    );
    assert.ok(vectors.length >= 1, "the embedder's failure was reported");
    assert.match(vectors[0]?.message ?? "", /embedding service unavailable/);
  } finally {
    await store.close();
  }
});
