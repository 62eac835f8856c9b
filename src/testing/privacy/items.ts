/**
 * The privacy contract's LangGraph store items (src/contract/graph-items.ts): owner data kept by owner, not by
 * session, so the contract writes them on the paths that erase the owner (eraseOwner, eraseAll), checks that no
 * byte of them survives the erasure and purge, and that a read of one owner's items never holds another's.
 */
import assert from "node:assert/strict";
import { hasGraphItems } from "../../contract/graph-items.js";

/** A word only the erased owner's items hold (written with it), so the contract knows they were there, then gone. */
export const ITEM_MARK = "zqxprivacyitemq";

/** Writes `owner`'s items holding `text` (one long, one with a time to live); false when the store keeps none. */
export async function writeItems(store: object, owner: string, text: string): Promise<boolean> {
  if (!hasGraphItems(store)) return false;
  const item = (key: string, value: unknown, ttlMs: number | null) => ({
    owner,
    namespace: `${owner}.memories`,
    key,
    value: JSON.stringify(value),
    fields: null,
    ttlMs,
  });
  await store.graphItems.write(
    [
      item("note", { text }, null),
      // Over 4 KB: a store that splits large values would store it across pages.
      item("long", { text: `${text} `.repeat(300) }, null),
      item("expiring", { text }, 3_600_000),
    ],
    [],
    Date.now(),
  );
  return true;
}

/** The values of `owner`'s items as a read of its scope answers them (none: the store keeps no items). */
export async function itemValues(store: object, owner: string): Promise<string[]> {
  if (!hasGraphItems(store)) return [];
  const items = await store.graphItems.page({ owner, prefix: "" }, null, Date.now(), 100);
  for (const item of items) assert.equal(item.owner, owner, "a read of one owner's items holds only its own");
  return items.map((item) => item.value);
}

/** The item writes and reads of `owner` the keyless contract runs: refused without its key, sealed with it. */
export function itemWrites(store: object, owner: string, text: string): [string, () => Promise<unknown>][] {
  if (!hasGraphItems(store)) return [];
  return [
    ["a put of her store item", () => writeItems(store, owner, text)],
    ["a read of her store items", () => itemValues(store, owner)],
  ];
}
