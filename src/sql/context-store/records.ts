/**
 * What both engines' sealed context rows share (sqlite-sealed.ts, postgres-sealed.ts): a row's record as read, the
 * record it keeps after a write, and the owners of a read's rows looked up once per record. No SQL: each engine
 * reads the rows and the owners in its own way (a synchronous driver, or an awaited connection).
 */
import type { RecordColumns } from "../../context/records.js";

/** A stored row's record columns as read (both null: unrecorded, or no row). */
export interface RecordRow {
  session_id: unknown;
  owner: unknown;
}

/** No record: what a re-seal passes (the row keeps its own) and what an absent row has. */
export const NO_RECORD: RecordColumns = { sessionId: null, owner: null };

/** A row's record as its columns (a column a statement did not select reads undefined: no record either). */
export function recordOfRow(row: RecordRow | undefined): RecordColumns {
  const text = (value: unknown) => (value == null ? null : String(value));
  return { sessionId: text(row?.session_id), owner: text(row?.owner) };
}

/** The record a row keeps after a write recorded `written`: its own when it has one (an upsert keeps it). */
export function keptRecord(row: RecordRow | undefined, written: RecordColumns): RecordColumns {
  const stored = recordOfRow(row);
  return stored.sessionId === null && stored.owner === null ? written : stored;
}

/** True when two records are the same (a write seals for the record its row keeps). */
export const sameRecord = (a: RecordColumns, b: RecordColumns): boolean =>
  a.sessionId === b.sessionId && a.owner === b.owner;

/** How many times a write is sealed again when the row's record changed under it before it gives up. */
export const WRITE_TRIES = 5;

/**
 * The owner of each row of one read, `ownerOf` asked once per distinct record (an owner, or the engine's promise
 * of one): a page of entries of one session reads its owner once.
 */
export function recordOwners<T>(ownerOf: (record: RecordColumns) => T): (row: RecordRow) => T {
  const owners = new Map<string, T>();
  return (row) => {
    const record = recordOfRow(row);
    const known = JSON.stringify([record.sessionId, record.owner]);
    if (owners.has(known)) return owners.get(known) as T;
    const owner = ownerOf(record);
    owners.set(known, owner);
    return owner;
  };
}
