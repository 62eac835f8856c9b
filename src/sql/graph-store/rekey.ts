/**
 * A key rotation's pass over an owner's LangGraph store items, this room's part of the transaction that ends a
 * rotation (sql/rekey/finish.ts, clear.ts): the items sealed under a previous key re-sealed under the new one, and
 * with `sealClear` those in clear sealed. An item's value is bound to its namespace and key (the row codec's "item"
 * kind), so it is opened and sealed with them; an item written meanwhile keeps its writer's form (writeItem compares
 * what was read). Each engine's two statements are here too, so the room's declaration (room.ts) reaches them
 * without loading the engine files.
 */
import { decodeWith, encode, isSealedValue } from "../../store/crypto/row-codec.js";
import { keyId, sealedStart } from "../../store/crypto/seal.js";
import { command, type Program, query, type Row, type Statement } from "../program.js";
import type { PostgresNames, RoomRekey, Rotation } from "../room.js";

/** A LangGraph store item of the owner, its value as stored. */
export interface ItemRow extends Row {
  owner: string;
  namespace: string;
  key: string;
  value: string;
}

/** A rotation's statements of an owner's items (each engine's file). */
export interface ItemRekeyStatements {
  itemsUnder(owner: string, start: string): Statement; // the owner's store items stored starting `start`: [ItemRow]
  writeItem(row: ItemRow, stored: string): Statement; // unless written meanwhile; `updated_at` kept
}

/** The room's part of a rotation over an engine's statements `s` (an item is its owner's: sessions play no part). */
export function itemRekey(s: ItemRekeyStatements): RoomRekey {
  return {
    reseal: (at, previous) => resealItems(s, at, previous),
    sealClear: (at) => sealClearItems(s, at),
  };
}

/** Re-seals under the rotation's key the owner's items sealed under `previous`. */
function* resealItems(s: ItemRekeyStatements, at: Rotation, previous: Uint8Array): Program<void> {
  for (const row of (yield s.itemsUnder(at.owner, sealedStart(keyId(previous)))) as ItemRow[]) {
    const binding = { namespace: row.namespace, key: row.key };
    yield s.writeItem(row, encode("item", at.key, binding, decodeWith("item", previous, binding, row.value)));
  }
}

/** Seals under the rotation's key the owner's items in clear (every item of the owner is read: it has few). */
function* sealClearItems(s: ItemRekeyStatements, at: Rotation): Program<void> {
  for (const row of (yield s.itemsUnder(at.owner, "")) as ItemRow[]) {
    if (isSealedValue("item", row.value)) continue;
    yield s.writeItem(row, encode("item", at.key, { namespace: row.namespace, key: row.key }, row.value));
  }
}

/** SQLite's statements of a rotation over the owner's items; a write leaves an item written meanwhile. */
export const sqliteItemRekey: ItemRekeyStatements = {
  itemsUnder: (owner, start) =>
    query(
      "SELECT owner, namespace, key, value FROM agent_graph_items WHERE owner = ? AND substr(value, 1, ?) = ?",
      [owner, start.length, start],
    ),
  writeItem: (row: ItemRow, stored) =>
    command(
      "UPDATE agent_graph_items SET value = ? WHERE owner = ? AND namespace = ? AND key = ? AND value = ?",
      [stored, row.owner, row.namespace, row.key, row.value],
    ),
};

/**
 * Postgres's statements of a rotation over the owner's items, each naming the owner (routed to its node on Citus); a
 * write leaves an item written meanwhile.
 */
export function postgresItemRekey(n: PostgresNames): ItemRekeyStatements {
  const items = n.table("agent_graph_items");
  return {
    itemsUnder: (owner, start) =>
      query(`SELECT owner, namespace, key, value FROM ${items} WHERE owner = $1 AND left(value, $2) = $3`, [
        owner,
        start.length,
        start,
      ]),
    writeItem: (row: ItemRow, stored) =>
      query(
        `UPDATE ${items} SET value = $1 WHERE owner = $2 AND namespace = $3 AND key = $4 AND value = $5 RETURNING key`,
        [stored, row.owner, row.namespace, row.key, row.value],
      ),
  };
}
