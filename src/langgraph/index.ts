/** `agent-session/langgraph`: LangGraph JS over agent-session's stores (docs/LANGGRAPH.md). */
export {
  AgentSessionStore,
  type AgentSessionStoreOptions,
  type GraphItemStore,
  type RefreshingOperation,
  type TtlPutOperation,
} from "./store.js";
