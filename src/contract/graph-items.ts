/**
 * A store's LangGraph items (`agent-session/langgraph`'s AgentSessionStore, docs/LANGGRAPH.md "Store"), as the
 * store, an erasure and the privacy contract see them: each item is its owner's, and `eraseOwner` removes them all.
 */

/** An item to store: its owner, namespace (labels joined by "."), key, value as JSON and how it is searched. */
export interface GraphItemDraft {
  readonly owner: string;
  readonly namespace: string;
  readonly key: string;
  /** The value's JSON. */
  readonly value: string;
  /** The fields a text query reads (JSON array of paths), `[]`: none, null: the whole value. */
  readonly fields: string | null;
  /** Its time to live in milliseconds (null: none); a read that refreshes it moves its expiry by as much. */
  readonly ttlMs: number | null;
}

/** A stored item, its value opened. */
export interface GraphItem {
  readonly owner: string;
  readonly namespace: string;
  readonly key: string;
  readonly value: string;
  readonly fields: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly expiresAt: number | null;
  /** Its time to live in milliseconds (null: none). */
  readonly ttlMs: number | null;
}

/** What a page reads: one owner's items (null: every owner's) under a namespace prefix ("": all). */
export interface GraphScope {
  readonly owner: string | null;
  readonly prefix: string;
}

/** A store's graph items: written and read per owner, erased with it. */
export interface GraphItems {
  /** Writes every put and delete, all or none, each owner's values sealed under its key (see the store). */
  write(puts: readonly GraphItemDraft[], deletes: readonly GraphItemDraft[], now: number): Promise<void>;
  /** Up to `limit` unexpired items of the scope after `after`, opened, in (namespace, key) order. */
  page(
    scope: GraphScope,
    after: readonly [string, string] | null,
    now: number,
    limit: number,
  ): Promise<GraphItem[]>;
  /** Deletes every item of `owner`; how many went. */
  eraseOwner(owner: string): Promise<number>;
  /**
   * Every item of `owner` (null: of every owner, owner by owner) unexpired at `now`, opened, in (owner, namespace,
   * key) order, read a page at a time (an export).
   */
  exportItems(owner: string | null, now: number): AsyncIterable<GraphItem>;
  /**
   * Stores exported items with their times and time to live, each owner's values sealed under its key; an item
   * stored under its (owner, namespace, key) already is kept. Answers how many were new.
   */
  importItems(items: readonly GraphItem[]): Promise<number>;
}

/** A store that keeps LangGraph store items. */
export interface GraphItemCapableStore {
  readonly graphItems: GraphItems;
}

/** True when `store` keeps LangGraph store items. */
export function hasGraphItems(store: object): store is GraphItemCapableStore {
  const items = (store as { graphItems?: unknown }).graphItems as Partial<GraphItems> | null | undefined;
  return (
    typeof items === "object" &&
    items !== null &&
    typeof items.eraseOwner === "function" &&
    typeof items.write === "function" &&
    typeof items.page === "function"
  );
}
