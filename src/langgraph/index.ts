/**
 * `agent-session/langgraph`: LangGraph JS on an agent-session store (docs/LANGGRAPH.md). Its peer,
 * `@langchain/langgraph-checkpoint`, is loaded only by apps that import this entry.
 */

export { AgentSessionSaver, type AgentSessionSaverOptions, type CheckpointerStore } from "./saver.js";
export {
  AgentSessionStore,
  type AgentSessionStoreOptions,
  type GraphItemStore,
  type RefreshingOperation,
  type TtlPutOperation,
} from "./store.js";
