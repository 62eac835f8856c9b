/**
 * A key rotation's pass over an owner's LangGraph store items, this room's part of the transaction that ends a
 * rotation (sql/rekey/finish.ts, clear.ts): the items sealed under a previous key re-sealed under the new one, and
 * with `sealClear` those in clear sealed. An item's value is bound to its namespace and key (owner-data.ts `ITEM`
 * kind), so it is opened and sealed with them; an item written meanwhile keeps its writer's form (writeItem compares
 * what was read). Each engine's two statements are here too, so the room's declaration (room.ts) reaches them
 * without loading the engine files.
 */
import { decodeWith, encode, isSealedValue } from "../../store/crypto/row-codec.js";
import { keyId, sealedStart } from "../../store/crypto/seal.js";
import { command, type Program, query, type Row, type Statement } from "../program.js";
import type { RoomRekey, Rotation } from "../room.js";
import type { Params } from "../room-engine.js";
import { ITEM } from "./owner-data.js";

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
    yield s.writeItem(row, encode(ITEM, at.key, binding, decodeWith(ITEM, previous, binding, row.value)));
  }
}

/** Seals under the rotation's key the owner's items in clear (every item of the owner is read: it has few). */
function* sealClearItems(s: ItemRekeyStatements, at: Rotation): Program<void> {
  for (const row of (yield s.itemsUnder(at.owner, "")) as ItemRow[]) {
    if (isSealedValue(ITEM, row.value)) continue;
    yield s.writeItem(row, encode(ITEM, at.key, { namespace: row.namespace, key: row.key }, row.value));
  }
}

/** What a rotation's statements differ in by engine: how the value's first characters are read, the write's answer. */
const DIALECT = {
  sqlite: { start: (n: string) => `substr(value, 1, ${n})`, answers: "" },
  // The pass reads no answer of the write; Postgres's names the key it wrote.
  postgres: { start: (n: string) => `left(value, ${n})`, answers: " RETURNING key" },
} as const;

/**
 * A rotation's statements over the owner's items in table `items`, written once (`params`: the engine's placeholders,
 * src/sql/room-engine.ts), each naming the owner (routed to its node on Citus); a write leaves an item written
 * meanwhile.
 */
export function itemRekeyStatements(
  kind: keyof typeof DIALECT,
  items: string,
  params: () => Params,
): ItemRekeyStatements {
  const d = DIALECT[kind];
  return {
    itemsUnder: (owner, start) => {
      const p = params();
      const where = `owner = ${p.bind(owner)} AND ${d.start(p.bind(start.length))} = ${p.bind(start)}`;
      return query(`SELECT owner, namespace, key, value FROM ${items} WHERE ${where}`, p.values);
    },
    writeItem: (row: ItemRow, stored) => {
      const p = params();
      const set = `value = ${p.bind(stored)}`;
      const item = `owner = ${p.bind(row.owner)} AND namespace = ${p.bind(row.namespace)} AND key = ${p.bind(row.key)}`;
      const sql = `UPDATE ${items} SET ${set} WHERE ${item} AND value = ${p.bind(row.value)}${d.answers}`;
      return d.answers ? query(sql, p.values) : command(sql, p.values);
    },
  };
}
