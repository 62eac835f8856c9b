/**
 * The values of an item row's write that both engines' statements pass alike (sqlite.ts, postgres.ts), written once;
 * each engine adds the rest its statement's text needs.
 */
import type { GraphItemDraft } from "../../contract/graph-items.js";

/** An item row's first values in the statements' column order: owner, namespace, key, value (as stored), fields. */
export function itemKeyParams(item: GraphItemDraft, stored: string): unknown[] {
  return [item.owner, item.namespace, item.key, stored, item.fields];
}

/** When an item written at `now` expires: null without a time to live. */
export const expiryOf = (item: GraphItemDraft, now: number): number | null =>
  item.ttlMs === null ? null : now + item.ttlMs;
