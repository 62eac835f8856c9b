/**
 * The graph store's table as the owner-data declarations hold it, once for both engines (each engine's part of
 * the room, room.ts, places it): each item its owner's, sealed as the room's `item` kind, deleted by
 * `eraseOwner`, and carried by owner-wide and store-wide exports.
 */
import { roomKind } from "../../store/crypto/row-codec.js";
import type { OwnerDataTable } from "../../store/owner-data.js";
import type { TransferField } from "../../store/transfer/owner-fields.js";

/**
 * An item's value sealed for its owner (the caller names the owner), bound to its namespace (joined by ".") and
 * key, so a value copied to another item does not open.
 */
export const ITEM = roomKind<{ namespace: string; key: string }>("item", {
  prefix: "item:",
  scope: (b) => b.namespace,
  id: (b) => b.key,
  what: (b) => `Item "${b.key}" of namespace "${b.namespace}"`,
});

/** The items' table, with the engine's placement and purge work. */
export function graphItemTables(
  placed: Pick<OwnerDataTable, "citus" | "citusColumn" | "purge">,
): OwnerDataTable[] {
  return [
    {
      table: "agent_graph_items",
      holds: "a LangGraph store's items (agent-session/langgraph), each its owner's",
      tie: "owner",
      sealed: "sealed",
      sealedAs: { value: ITEM.name },
      erasure: "deleted by eraseOwner (manager/erase.ts); an expired one by the store's TTL sweep",
      columns: { owner: "name", namespace: "name", key: "name", value: "content", fields: "meta" },
      ...placed,
    },
  ];
}

/** LangGraph store items are owner data, carried by owner-wide and store-wide exports (docs/LANGGRAPH.md, Transfer). */
export const GRAPH_ITEM_TRANSFER_FIELDS: Readonly<Record<string, TransferField>> = {
  "agent_graph_items.owner": { carried: "item.owner" },
  "agent_graph_items.namespace": { carried: "item.namespace" },
  "agent_graph_items.key": { carried: "item.key" },
  "agent_graph_items.value": { carried: "item.value" },
};
