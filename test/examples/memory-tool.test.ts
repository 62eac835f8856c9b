// The memory tool example runs as documented (its scripted mock model; no API key), and a second run over the
// same file finds what the first one stored.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { promisify } from "node:util";
import { tempDir } from "../cli/helpers.js";

const run = promisify(execFile);

test("examples/memory-tool.ts stores the files in the store, and a second run reads them back", async () => {
  const tmp = tempDir("agent-session-memory-tool-");
  try {
    const env = { ...process.env, MEMORY_TOOL_DB: tmp.path("memory.db"), ANTHROPIC_API_KEY: "" };
    const first = await run(process.execPath, ["--import", "tsx", "examples/memory-tool.ts"], { env });
    assert.match(first.stdout, /File created successfully at: \/memories\/preferences\.md/);
    assert.match(first.stdout, /stored files: \{ '\/memories\/preferences\.md': 'coffee: espresso\\n' \}/);
    const second = await run(process.execPath, ["--import", "tsx", "examples/memory-tool.ts"], { env });
    assert.match(second.stdout, /17B\t\/memories\/preferences\.md/);
    assert.match(second.stdout, /Error: File \/memories\/preferences\.md already exists/);
  } finally {
    tmp.remove();
  }
});
