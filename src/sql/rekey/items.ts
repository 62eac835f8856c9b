/**
 * A key rotation's pass over an owner's LangGraph store items (sql/graph-store/), in the transaction that ends it
 * (finish.ts, clear.ts): the items sealed under a previous key re-sealed under the new one, and with `sealClear` those
 * in clear sealed. An item's value is bound to its namespace and key (the row codec's "item" kind), so it is opened
 * and sealed with them; an item written meanwhile keeps its writer's form (writeItem compares what was read).
 */
import { decodeWith, encode, isSealedValue } from "../../store/crypto/row-codec.js";
import { keyId, sealedStart } from "../../store/crypto/seal.js";
import type { Program } from "../program.js";
import type { ItemRow, RekeyTable, Rotation } from "./table.js";

/** Re-seals under the rotation's key the owner's items sealed under `previous`. */
export function* resealItems(s: RekeyTable, at: Rotation, previous: Uint8Array): Program<void> {
  for (const row of (yield s.itemsUnder(at.owner, sealedStart(keyId(previous)))) as ItemRow[]) {
    const binding = { namespace: row.namespace, key: row.key };
    yield s.writeItem(row, encode("item", at.key, binding, decodeWith("item", previous, binding, row.value)));
  }
}

/** Seals under the rotation's key the owner's items in clear (every item of the owner is read: it has few). */
export function* sealClearItems(s: RekeyTable, at: Rotation): Program<void> {
  for (const row of (yield s.itemsUnder(at.owner, "")) as ItemRow[]) {
    if (isSealedValue("item", row.value)) continue;
    yield s.writeItem(row, encode("item", at.key, { namespace: row.namespace, key: row.key }, row.value));
  }
}
