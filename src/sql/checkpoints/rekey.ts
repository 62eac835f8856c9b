/**
 * A key rotation's pass over the checkpoint rows of an owner's sessions (LangGraph threads), this room's part of
 * the transaction that ends a rotation (sql/rekey/finish.ts, clear.ts): rows sealed under a previous key re-sealed under the new one,
 * and with `sealClear` those in clear sealed. Each byte column is opened and sealed bound to its row's key
 * (sealing.ts rowId), so a row reads back byte for byte; a delta row's suffix is sealed on its own, as a write
 * seals it. A session's rows are read a page at a time in key order, so the pass holds one page whatever the
 * thread's length; a row written meanwhile (its first column changed) keeps its writer's form.
 */
import { SessionError } from "../../errors.js";
import { base64DecodeCanonical, utf8Decode, utf8Encode } from "../../runtime/bytes.js";
import { decodeWith } from "../../store/crypto/row-codec.js";
import { keyId, sealedStart } from "../../store/crypto/seal.js";
import type { Program, Row } from "../program.js";
import type { RoomRekey, Rotation } from "../room.js";
import {
  asBytes,
  type CheckpointRekeyStatements,
  SEALED_CHECKPOINT_TABLES,
  type SealedCheckpointTable,
  storedBytes,
} from "./sealing.js";

// Rows per read: a value row holds a message or more.
const PAGE = 200;

/** The room's part of a rotation over an engine's statements `s`. */
export function checkpointRekey(s: CheckpointRekeyStatements): RoomRekey {
  return {
    reseal: (at, previous, sessions) => resealCheckpoints(s, at, previous, sessions),
    sealClear: (at, sessions) => sealClearCheckpoints(s, at, sessions),
  };
}

/** Re-seals under the rotation's key the rows of `sessions` sealed under `previous`. */
function* resealCheckpoints(
  s: CheckpointRekeyStatements,
  at: Rotation,
  previous: Uint8Array,
  sessions: readonly string[],
): Program<void> {
  const start = utf8Encode(sealedStart(keyId(previous)));
  const open = (sessionId: string, id: string, raw: Uint8Array) => {
    const text = decodeWith("checkpoint", previous, { sessionId, id }, utf8Decode(raw));
    const bytes = base64DecodeCanonical(text);
    // A sealed column opened with its key holds base64 (sealing.ts): anything else was not written by this code.
    if (!bytes)
      throw new SessionError("STORAGE", `A checkpoint row of session "${sessionId}" holds no base64`);
    return bytes;
  };
  for (const sessionId of sessions) yield* pass(s, at, sessionId, start, open);
}

/** Seals under the rotation's key the rows of `sessions` in clear. */
function* sealClearCheckpoints(
  s: CheckpointRekeyStatements,
  at: Rotation,
  sessions: readonly string[],
): Program<void> {
  for (const sessionId of sessions) yield* pass(s, at, sessionId, null, (_s, _id, raw) => raw);
}

function* pass(
  s: CheckpointRekeyStatements,
  at: Rotation,
  sessionId: string,
  start: Uint8Array | null,
  open: (sessionId: string, id: string, raw: Uint8Array) => Uint8Array,
): Program<void> {
  for (const table of SEALED_CHECKPOINT_TABLES) {
    for (let after: readonly unknown[] | null = null; ; ) {
      const rows: Row[] = yield s.checkpointRows(sessionId, table, start, after, PAGE);
      for (const row of rows) {
        const stored = table.columns.map(([column, id]) => {
          const bytes = open(sessionId, id(row), asBytes(row[column]));
          return storedBytes(at.key, sessionId, id(row), bytes).data;
        });
        yield s.writeCheckpointRow(sessionId, table, row, stored);
      }
      if (rows.length < PAGE) break;
      after = keyOf(table, rows.at(-1)!);
    }
  }
}

const keyOf = (table: SealedCheckpointTable, row: Row) => table.key.map((column) => row[column]);
