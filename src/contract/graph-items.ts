/**
 * A store's LangGraph items (`agent-session/langgraph`'s AgentSessionStore, docs/LANGGRAPH.md "Store"), as an
 * erasure sees them: each item is its owner's, and `eraseOwner` removes them all.
 */

/** The part of a store's graph items an owner's erasure uses. */
export interface GraphItemEraser {
  /** Deletes every item of `owner`; how many went. */
  eraseOwner(owner: string): Promise<number>;
}

/** A store that keeps LangGraph store items. */
export interface GraphItemCapableStore {
  readonly graphItems: GraphItemEraser;
}

/** True when `store` keeps LangGraph store items. */
export function hasGraphItems(store: object): store is GraphItemCapableStore {
  const items = (store as { graphItems?: unknown }).graphItems;
  return (
    typeof items === "object" && items !== null && typeof (items as GraphItemEraser).eraseOwner === "function"
  );
}
