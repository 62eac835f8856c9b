// examples/mcp-client.ts runs as written: the SDK's client finds the answer and the turns around it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const EXAMPLE = fileURLToPath(new URL("../../examples/mcp-client.ts", import.meta.url));

test("examples/mcp-client.ts searches over MCP and reads the turns around the hit", () => {
  const run = spawnSync(process.execPath, ["--import", import.meta.resolve("tsx"), EXAMPLE], {
    encoding: "utf8",
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /search_memory:\n#1 session="deploy" message="a1" role=assistant/);
  assert.match(run.stdout, /read_turns_around:\n\[user\] message="u1"[\s\S]*> \[assistant\] message="a1"/);
  assert.match(run.stdout, /read_block:\n- Deploys happen on Thursdays\./);
});
