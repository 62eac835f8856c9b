/**
 * How a checkpoint's byte columns are stored (steps.ts): in clear, or for an encrypted owner sealed as the room's
 * `CHECKPOINT` kind (the base64 of the bytes inside), bound to the row's key within its session.
 */
import { SessionError } from "../../errors.js";
import { base64DecodeCanonical, base64Encode, utf8Decode, utf8Encode } from "../../runtime/bytes.js";
import { type CodecKeys, decode, encode, roomKind } from "../../store/crypto/row-codec.js";
import type { Row, Statement } from "../program.js";
import { idOf } from "./ids.js";

/**
 * A checkpoint's bytes (LangGraph's, base64 inside) sealed for its session's owner, bound to the row's key within
 * the session (`rowId`), in a scope of their own: they never open as a message of the session, nor one as them.
 */
export const CHECKPOINT = roomKind<{ sessionId: string; id: string }>("checkpoint", {
  prefix: "checkpoint:",
  scope: (b) => b.sessionId,
  id: (b) => b.id,
  session: (b) => b.sessionId,
  what: (b) => `a checkpoint row of session "${b.sessionId}"`,
});

/** A stored byte column: the bytes, or (`sealed`) the sealed text of their base64. */
export interface StoredBytes {
  data: Uint8Array;
  sealed: boolean;
}

/** The key a byte column is sealed under within its session: its row's table and key, unambiguous. */
export const rowId = (...parts: readonly (string | number)[]): string => JSON.stringify(parts);

/** `bytes` as stored for the session: sealed under `key` (bound to `id`), or in clear. */
export function storedBytes(
  key: Uint8Array | null,
  sessionId: string,
  id: string,
  bytes: Uint8Array,
): StoredBytes {
  if (key === null) return { data: bytes, sealed: false };
  return {
    data: utf8Encode(encode(CHECKPOINT, key, { sessionId, id }, base64Encode(bytes))),
    sealed: true,
  };
}

/** The bytes a stored column holds (`DECRYPT_FAILED` for a sealed one the keys do not open). */
export function openedBytes(
  keys: CodecKeys | undefined,
  sessionId: string,
  id: string,
  row: Row,
  column = "data",
): Uint8Array {
  const raw = asBytes(row[column]);
  if (!isTrue(row[`${column}_sealed`] ?? row.sealed)) return raw;
  const text = decode(CHECKPOINT, keys, undefined, { sessionId, id }, utf8Decode(raw));
  const bytes = base64DecodeCanonical(text);
  if (!bytes) throw new SessionError("STORAGE", `A checkpoint row of session "${sessionId}" is damaged`);
  return bytes;
}

const isTrue = (v: unknown) => v === true || v === 1 || v === 1n || v === "1" || v === "t";

/** A byte column as the driver answers it (a Buffer is a Uint8Array). */
export function asBytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value === null || value === undefined) return new Uint8Array();
  throw new SessionError("STORAGE", "A checkpoint column holds no bytes");
}

/** A checkpoint table whose byte columns a key rotation re-seals (rekey.ts). */
export interface SealedCheckpointTable {
  /** Its name (unqualified). */
  table: string;
  /** Its primary key after `session_id`: a rotation pages a session's rows in this order. */
  key: readonly string[];
  /** Its byte columns, each with the key (rowId) it is sealed bound to, from the row's key columns. */
  columns: readonly (readonly [column: string, id: (row: Row) => string])[];
}

const text = (row: Row, column: string) => String(row[column]);
// An id column holds the id's stored form (ids.ts); a row is sealed bound to the id.
const id = (row: Row, column: string) => idOf(row[column]);

/** The three tables of checkpoints and how each byte column is bound (as steps.ts writes them). */
export const SEALED_CHECKPOINT_TABLES: readonly SealedCheckpointTable[] = [
  {
    table: "agent_checkpoints",
    key: ["ns", "id"],
    columns: [
      ["data", (r) => rowId("c", text(r, "ns"), id(r, "id"))],
      ["metadata", (r) => rowId("m", text(r, "ns"), id(r, "id"))],
    ],
  },
  {
    table: "agent_checkpoint_values",
    key: ["ns", "channel", "version"],
    columns: [["data", (r) => rowId("v", text(r, "ns"), text(r, "channel"), text(r, "version"))]],
  },
  {
    table: "agent_checkpoint_writes",
    key: ["ns", "checkpoint_id", "task_id", "idx"],
    columns: [
      ["data", (r) => rowId("w", text(r, "ns"), id(r, "checkpoint_id"), id(r, "task_id"), Number(r.idx))],
    ],
  },
];

/** A key rotation's statements of a session's checkpoint rows (rekey.ts, the room's part of a rotation). */
export interface CheckpointRekeyStatements {
  /**
   * A page of a session's rows of `table` after the key `after` (null: from its start), in key order: those sealed
   * whose bytes start `start`, or (`start` null) those holding bytes in clear.
   */
  checkpointRows(
    sessionId: string,
    table: SealedCheckpointTable,
    start: Uint8Array | null,
    after: readonly unknown[] | null,
    limit: number,
  ): Statement;
  /** The row's byte columns stored as `stored` (in the table's order), sealed, unless its first one changed meanwhile. */
  writeCheckpointRow(
    sessionId: string,
    table: SealedCheckpointTable,
    row: Row,
    stored: readonly Uint8Array[],
  ): Statement;
}
