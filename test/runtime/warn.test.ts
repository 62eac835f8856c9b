import assert from "node:assert/strict";
import { test } from "node:test";
import { SessionError } from "../../src/errors.js";
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
