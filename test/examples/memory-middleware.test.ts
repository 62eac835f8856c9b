// The memory middleware example runs as documented, twice on one SQLite file: the second run continues the first.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { tempDir } from "../cli/helpers.js";

const run = promisify(execFile);

test("examples/memory-middleware.ts stores each turn once and gives the next run the stored history", async () => {
  const dir = tempDir("agent-session-memory-");
  after(() => dir.remove());
  const db = dir.path("memory.db");
  const example = ["--import", "tsx", "examples/memory-middleware.ts", db];
  const first = await run(process.execPath, example);
  assert.match(first.stdout, /generateText → I was given 2 messages/);
  assert.match(
    first.stdout,
    /streamText {3}→ I was given 4 messages; you said "My favourite colour is teal\.", "Which/,
  );
  assert.match(first.stdout, /holds 4 messages/);
  const second = await run(process.execPath, example);
  assert.match(second.stdout, /generateText → I was given 6 messages/);
  assert.match(second.stdout, /holds 8 messages/);
});
