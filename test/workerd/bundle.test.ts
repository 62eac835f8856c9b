import assert from "node:assert/strict";
import { test } from "node:test";
import { bundleForWorkerd } from "./harness.js";

// The entries a Worker can import bundle for workerd without nodejs_compat: no `node:` import (nor a bare Node
// built-in) is reachable from them; Node-only code loads lazily (src/runtime/load.ts). `agent-session/agent` and
// `agent-session/postgres` are Node-only by design (file and Redis/pg storage) and are not listed.
const entries = {
  "agent-session": "src/index.ts",
  "agent-session/utils": "src/utils/index.ts",
  "agent-session/s3": "src/s3/index.ts",
  "agent-session/ai": "src/ai-sdk/index.ts",
  "agent-session/openai-agents": "src/openai-agents/index.ts",
};

for (const [name, entry] of Object.entries(entries)) {
  test(`${name} bundles for workerd with no Node.js built-in`, async () => {
    // A platform-neutral build fails on any built-in it reaches; the output must import nothing either.
    const { metafile } = await bundleForWorkerd(entry);
    const outputs = Object.values(metafile.outputs);
    assert.equal(outputs.length, 1);
    assert.deepEqual(outputs[0]!.imports, []);
    const inputs = Object.keys(metafile.inputs);
    assert.ok(
      !inputs.some((input) => /node_modules\/better-sqlite3/.test(input)),
      "better-sqlite3 is bundled",
    );
  });
}
