/**
 * `agent-session/mastra`: Mastra's memory storage on an agent-session store (docs/MASTRA.md). Its peer,
 * `@mastra/core`, is loaded only by apps that import this entry.
 */
import { MastraCompositeStore } from "@mastra/core/storage";
import { AgentSessionMemoryStorage, type MastraCapableStore } from "./storage.js";

export { AgentSessionVector, type SearchableStore, searchRecall } from "./recall.js";
export { AgentSessionMemoryStorage, type MastraCapableStore } from "./storage.js";

/** A Mastra storage whose memory domain is the store (`new Memory({ storage: mastraStorage(store) })`). */
export function mastraStorage(store: MastraCapableStore, id = "agent-session"): MastraCompositeStore {
  return new MastraCompositeStore({ id, domains: { memory: new AgentSessionMemoryStorage(store) } });
}
