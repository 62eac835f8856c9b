import { describe, it } from "node:test";
import { MemoryStore } from "../src/memory/store.js";
import { runProviderContract } from "../src/testing/index.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

runProviderContract(runner, { name: "memory", create: async (policy) => new MemoryStore(policy) });
