/**
 * `agent-session/eve`: a memory provider for Vercel's eve on any agent-session store with owners (docs/EVE.md).
 * Its peer, `eve`, is loaded only by apps that import this entry, and then only its tool helper, on first use.
 */

export { eraseEveSession } from "./erase.js";
export type { AgentSessionMemoryOptions, OwnerContext } from "./options.js";
export { agentSessionMemory } from "./provider.js";
