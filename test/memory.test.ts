import { MemoryStore } from "../src/memory/store.js";
import { runProviderContract } from "./contract/index.js";

runProviderContract({ name: "memory", create: async (policy) => new MemoryStore(policy) });
