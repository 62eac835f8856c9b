/**
 * What a key rotation's programs (steps.ts, finish.ts) ask of an engine: its statements, and a few hooks for
 * the steps whose plan differs on purpose. SQLite re-seals a message row by row (its content may be in chunks,
 * sql/engines/sqlite/chunks.ts, and its FTS index follows through search/indexing.ts); Postgres re-seals a session's rows in
 * one UPDATE that also makes their search vector again from blind tokens of the new key, opens rows through its
 * awaited key look-up, locks the rotation's row, and routes each statement by session on Citus. The tables are
 * sqlite.ts and postgres.ts here (with the rotation's record in sqlite-rotation.ts and postgres-rotation.ts, and
 * sealClear's in sqlite-clear.ts and postgres-clear.ts; the facts' statements are the facts' own,
 * src/sql/facts/sqlite.ts and postgres.ts), the hooks src/sql/rekey-hooks/sqlite.ts and src/sql/rekey-hooks/postgres.ts.
 */
import type { Keyring } from "../../store/crypto/keyring.js";
import type { FactWords } from "../../store/fact-sealing.js";
import type { Program, Row, Statement, Step } from "../program.js";
import type { RoomRekey, Rotation } from "../room.js";

export type { Rotation } from "../room.js";

/** A head number as the engine answers it (a number on SQLite, text on Postgres): passed back as it came. */
export type Num = number | string;

/** A session of the owner as the walk holds it. */
export interface OwnedSession extends Row {
  num: Num;
  session_id: string;
}

/** An unfinished rotation's cursor: the last session (head num) and message id re-sealed (null: the session's start). */
export interface Cursor extends Row {
  session_num: Num;
  message_id: string | null;
}

/** An overlay summary sealed under another key than the rotation's. */
/** A session name sealed under another key than the rotation's (store/session-names.ts). */
export interface NameRow extends Row {
  id: string;
  name: string;
}

export interface SummaryRow extends Row {
  seq: Num;
  id: string;
  session_id: string;
  summary: string;
}

/** A fact sealed under another key than the rotation's. */
export interface SealedFactRow extends Row {
  seq: Num;
  scope: string;
  id: string;
  text: string;
}

/** A kept stream chunk in clear (its stored value: a leading `~` doubled). */
export interface ClearChunkRow extends Row {
  session_id: string;
  stream_id: string;
  seq: Num;
  chunk: string;
}

/** A compaction row of the change log (its `data`: the overlay as JSON, `"sealed": true` when its summary is). */
export interface ChangeRow extends Row {
  seq: Num;
  session_id: string;
  data: string;
}

/** A fact in clear, with its subject. */
export interface ClearFactRow extends SealedFactRow {
  about: string | null;
}

/** The rekey table's statements of facts, which the facts' own statement files make (sql/facts/sqlite.ts, postgres.ts). */
export type FactRekeyStatement =
  | "factsUnder"
  | "writeFact"
  | "clearFacts"
  | "factVectorsPresent"
  | "dropFactVectors";

/** An engine's statements and hooks for a rotation (see the module comment). */
export interface RekeyTable {
  /** The keyring, whose previous keys of the owner name the blocks and entries to re-seal. */
  readonly keyring: Keyring;
  /** The storage rooms' passes (src/sql/rooms/), in the rooms' order. */
  readonly rooms: readonly RoomRekey[];
  // Statements: each answers the rows named, or none.
  count(owner: string): Statement; // the owner's messages: [{ n }]
  readRotation(ownerHash: string): Statement; // the owner's unfinished rotation: [{ from_check, ...Cursor }]
  /**
   * The same read under the rotation row's lock, where two runs of one rotation could interleave (Postgres: they
   * take turns, batch by batch); null where the write transaction excludes them already (SQLite).
   */
  lockRotation(ownerHash: string): Statement | null;
  /** The owner's recorded key check under a share lock (`[{ key_check }]`); null where a batch cannot see it change. */
  keyCheck(ownerHash: string): Statement | null;
  sessionAt(num: Num): Statement; // [OwnedSession]
  nextSession(owner: string, after: Num): Statement; // the owner's first session after head `after`
  rowsAfter(session: OwnedSession, after: string | null, limit: number): Statement; // by id, after `after`
  moveCursor(ownerHash: string, num: Num, messageId: string | null): Statement;
  examined(owner: string, cursor: Cursor): Statement; // the owner's rows at or before `cursor`: [{ n }]
  underOtherKeys(owner: string, start: string): Statement; // rows sealed under a key not starting `start`: [{ n }]
  endRotation(ownerHash: string): Statement; // the key rotated from is no longer recorded
  restartRotation(ownerHash: string): Statement; // recorded again from the recorded check (another run ended it)
  summaries(owner: string, start: string): Statement; // sealed summaries not starting `start`: [SummaryRow]
  writeSummary(row: SummaryRow, sealed: string): Statement;
  blocksUnder(start: string): Statement; // sealed blocks starting `start`
  entriesUnder(start: string): Statement; // sealed entries starting `start`
  factsUnder(start: string): Statement; // sealed facts starting `start`: [SealedFactRow]
  namesUnder(owner: string, start: string): Statement; // the owner's session names sealed starting `start`: [NameRow]
  writeName(row: NameRow, sealed: string): Statement; // unless renamed meanwhile; `updated_at` kept
  /**
   * A fact's `words` sealed under `key` in place of `row`'s (its subject sealed with it), its search index following
   * (blind tokens of `key`).
   */
  writeFact(row: SealedFactRow, key: Uint8Array, words: FactWords): Step;
  // Rows in clear of the owner (`sealClear`, clear.ts).
  clearLeft(owner: string): Statement; // the owner's messages in clear: [{ n }]
  // `ids`: the owner's session ids (ownerSessions), passed in so that no statement joins another table (Citus).
  clearFacts(owner: string, ids: string[]): Statement; // facts in clear of the owner and its sessions: [ClearFactRow]
  clearChunks(ids: string[]): Statement; // kept stream chunks in clear of the sessions: [ClearChunkRow]
  clearBlocks(owner: string, ids: string[]): Statement; // clear blocks maybe the owner's (resealBlock decides)
  clearEntries(owner: string, ids: string[]): Statement; // clear entries maybe the owner's (resealEntry decides)
  vectorsPresent(): Statement; // a row when the message vector table exists
  changesPresent(): Statement; // a row when the change log's table exists
  clearChanges(ids: string[]): Statement; // the change log's compaction rows of the sessions: [ChangeRow]
  writeChange(row: ChangeRow, data: string): Statement; // the row's data in place of what was read
  ownerSessions(owner: string): Statement; // its registered sessions, `num` null without a head: [OwnedSession]
  dropVectors(session: OwnedSession): Statement; // the session's message vectors deleted
  factVectorsPresent(): Statement; // a row when the facts' vector column exists (a store with an embedder made it)
  dropFactVectors(owner: string, ids: string[]): Statement; // the vectors of the owner's and its sessions' facts: none
  /** A summary in clear stored sealed (`sealed`) in place of `row`'s. */
  writeClearSummary(row: SummaryRow, sealed: string): Statement;
  /** A chunk in clear stored sealed (`sealed`) in place of `row`'s. */
  writeChunk(row: ClearChunkRow, sealed: string): Statement;
  // Hooks: the steps whose plan differs (see the module comment).
  /** The owner's overlay summaries in clear, their text as written. */
  clearSummaries(owner: string): Program<SummaryRow[]>;
  /** Re-seals the session's rows not under the new key yet (and their search index); answers how many it wrote. */
  resealMessages(at: Rotation, session: OwnedSession, rows: Row[]): Program<number>;
  /** The summaries `rows` opened and sealed under the new key, in their order. */
  sealSummaries(at: Rotation, rows: SummaryRow[]): Program<string[]>;
  /** Re-seals one block row as a write would store it now (for the owner of its own record). */
  resealBlock(row: Row): Program<void>;
  /** Re-seals one entry row as a write would store it now, its search index following the key. */
  resealEntry(row: Row): Program<void>;
}
