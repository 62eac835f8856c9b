/**
 * A key rotation's pass over the checkpoint rows of an owner's sessions (LangGraph threads), this room's part of
 * the transaction that ends a rotation (sql/rekey/finish.ts, clear.ts): rows sealed under a previous key re-sealed under the new one,
 * and with `sealClear` those in clear sealed. Each byte column is opened and sealed bound to its row's key
 * (sealing.ts rowId), so a row reads back byte for byte; a delta row's suffix is sealed on its own, as a write
 * seals it. A session's rows are read a page at a time in key order, so the pass holds one page whatever the
 * thread's length; a row written meanwhile (its first column changed) keeps its writer's form. Each engine's
 * statements of the pass are here too, so the room's declaration (room.ts) reaches them without loading the engine
 * files.
 */
import { SessionError } from "../../errors.js";
import { base64DecodeCanonical, utf8Decode, utf8Encode } from "../../runtime/bytes.js";
import { decodeWith } from "../../store/crypto/row-codec.js";
import { keyId, sealedStart } from "../../store/crypto/seal.js";
import { command, type Program, query, type Row } from "../program.js";
import type { PostgresNames, RoomRekey, Rotation } from "../room.js";
import {
  asBytes,
  CHECKPOINT,
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
    const text = decodeWith(CHECKPOINT, previous, { sessionId, id }, utf8Decode(raw));
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

const keyed = (t: SealedCheckpointTable) => t.key.join(", ");

/** SQLite's statements of a rotation over a session's checkpoint rows. */
export const sqliteCheckpointRekey: CheckpointRekeyStatements = {
  checkpointRows: (sessionId, t, start, after, limit) => {
    const which =
      start === null ? "sealed = 0 AND data IS NOT NULL" : "sealed = 1 AND substr(data, 1, ?) = ?";
    const past = after === null ? "" : ` AND (${keyed(t)}) > (${t.key.map(() => "?").join(", ")})`;
    const columns = t.columns.map(([column]) => column).join(", ");
    return query(
      `SELECT ${keyed(t)}, ${columns} FROM ${t.table} WHERE session_id = ? AND ${which}${past}
      ORDER BY ${keyed(t)} LIMIT ?`,
      [sessionId, ...(start === null ? [] : [start.length, start]), ...(after ?? []), limit],
    );
  },
  writeCheckpointRow: (sessionId, t, row, stored) => {
    const set = t.columns.map(([column]) => `${column} = ?`).join(", ");
    const first = t.columns[0]![0];
    return command(
      `UPDATE ${t.table} SET ${set}, sealed = 1 WHERE session_id = ? AND ${t.key.map((k) => `${k} = ?`).join(" AND ")}
      AND ${first} = ?`,
      [...stored, sessionId, ...t.key.map((k) => row[k]), row[first]],
    );
  },
};

/** Postgres's statements of a rotation over a session's checkpoint rows, each naming the session (routed to its node on Citus). */
export function postgresCheckpointRekey(n: PostgresNames): CheckpointRekeyStatements {
  return {
    checkpointRows: (sessionId, c, start, after, limit) => {
      const params: unknown[] = [sessionId];
      const p = (value: unknown) => {
        params.push(value);
        return `$${params.length}`;
      };
      const which =
        start === null
          ? "NOT sealed AND data IS NOT NULL"
          : `sealed AND substring(data from 1 for ${p(start.length)}::integer) = ${p(start)}::bytea`;
      const past =
        after === null ? "" : ` AND (${c.key.join(", ")}) > (${after.map((v) => p(v)).join(", ")})`;
      const columns = c.columns.map(([column]) => column).join(", ");
      return query(
        `SELECT ${c.key.join(", ")}, ${columns} FROM ${n.table(c.table)}
        WHERE session_id = $1 AND ${which}${past} ORDER BY ${c.key.join(", ")} LIMIT ${p(limit)}`,
        params,
      );
    },
    writeCheckpointRow: (sessionId, c, row, stored) => {
      const params: unknown[] = [sessionId];
      const p = (value: unknown) => {
        params.push(value);
        return `$${params.length}`;
      };
      const set = c.columns.map(([column], i) => `${column} = ${p(stored[i])}`).join(", ");
      const where = c.key.map((k) => `${k} = ${p(row[k])}`).join(" AND ");
      const first = c.columns[0]![0];
      return command(
        `UPDATE ${n.table(c.table)} SET ${set}, sealed = true
        WHERE session_id = $1 AND ${where} AND ${first} = ${p(row[first])}`,
        params,
      );
    },
  };
}
