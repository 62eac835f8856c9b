// LangGraph's checkpoint conformance suite (@langchain/langgraph-checkpoint-validation) runs under vitest, its own
// runner, with its globals; scripts/test.mjs runs these files after the node:test files.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globals: true,
    include: ["test/langgraph/*.vitest.ts"],
    // One file at a time: each backend's run is ~750 cases against one database.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
