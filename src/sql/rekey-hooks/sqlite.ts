/**
 * Key rotation on SQLite: sql/rekey/steps.ts over SQLite's statements (sql/rekey/sqlite.ts) and its hooks here,
 * which differ from Postgres's on purpose: a message row is re-sealed one at a time, because its content may be in
 * chunks (sql/engines/sqlite/chunks.ts) and its full-text index follows it through search/indexing.ts, and everything runs
 * synchronously inside the batch's write transaction.
 */
import { SessionError } from "../../errors.js";
import { parseMessage } from "../../message/json.js";
import type { RekeyOptions, RekeyReport } from "../../store/crypto/rekey-options.js";
import { startRotation, startSealing } from "../../store/crypto/rotation.js";
import { isSealed, sealedStart } from "../../store/crypto/seal.js";
import { keptRecord, NO_RECORD } from "../context-store/records.js";
import {
  type BlockReadRow,
  type EntryRow,
  entryOpener,
  readBlockRow,
  storedBlock,
  storedEntry,
} from "../context-store/sqlite-sealed.js";
import { deleteChunks, storedContent, storedText, writeChunks } from "../engines/sqlite/chunks.js";
import type { SqlDriver, SqlValue } from "../engines/sqlite/driver.js";
import { readFreeText } from "../engines/sqlite/free-text.js";
import { runInTransaction, runProgram } from "../engines/sqlite/program.js";
import { sqliteFactRekey } from "../facts/sqlite.js";
import { perform, type Row } from "../program.js";
import { REKEY } from "../rekey/sqlite.js";
import { REKEY_CLEAR } from "../rekey/sqlite-clear.js";
import { rekeyWith } from "../rekey/steps.js";
import type { OwnedSession, RekeyTable, Rotation, SummaryRow } from "../rekey/table.js";
import { SQLITE_ROOMS } from "../rooms/sqlite.js";
import { storedForm } from "../sealing/sqlite.js";
import { afterInsert, indexedSeq, unindexMessage } from "../search/sqlite-indexing.js";

// A re-seal records nothing: each row is sealed again for the owner of its own record.

// The storage rooms' passes (their statements are the same for every driver).
const ROOM_REKEYS = SQLITE_ROOMS.flatMap((room) => (room.rekey ? [room.rekey] : []));

/** Re-seals `owner`'s messages under the keyring's current key; see {@link RekeyOptions} and docs/PRIVACY.md. */
export function rekeySqlite(
  driver: SqlDriver,
  owner: unknown,
  options: RekeyOptions = {},
): Promise<RekeyReport> {
  const table = (): RekeyTable => rekeyTable(driver);
  return rekeyWith(
    {
      keys: driver.keys,
      start: (checked, sealClear) =>
        driver.transaction(() => (sealClear ? startSealing : startRotation)(driver.keys!, checked)),
      run: (program, write) =>
        write ? runInTransaction(driver, () => program(table())) : runProgram(driver, program(table())),
    },
    owner,
    options,
  );
}

/** SQLite's rekey table: its statements and the hooks below. */
function rekeyTable(driver: SqlDriver): RekeyTable {
  const keys = driver.keys!;
  return {
    ...REKEY,
    ...sqliteFactRekey,
    keyring: keys.keyring,
    rooms: ROOM_REKEYS,
    ...REKEY_CLEAR,
    resealMessages: (at, session, rows) =>
      perform(() => rows.filter((row) => reseal(driver, session, row as MessageRow, at)).length),
    *clearSummaries(owner) {
      const rows = yield REKEY_CLEAR.clearSummaries(owner);
      return rows.map(
        (row) => ({ ...row, summary: readFreeText(row.summary, row.summary_encoded) }) as SummaryRow,
      );
    },
    sealSummaries: (at, rows) => perform(() => rows.map((row) => sealSummary(driver, at, row))),
    *resealBlock(row) {
      const block = row as unknown as BlockReadRow & { key: string };
      const stored = yield* perform(() =>
        storedBlock(driver, block.key, readBlockRow(driver, block.key, block), keptRecord(block, NO_RECORD)),
      );
      yield REKEY.writeBlock(block.key, stored.content, stored.sealed);
    },
    *resealEntry(row) {
      const entry = row as unknown as EntryRow & { seq: number; label: string; key: string };
      const stored = yield* perform(() => {
        const { key, content } = entryOpener(driver, entry.label)(entry.key, entry);
        return storedEntry(driver, entry.label, key, content, keptRecord(entry, NO_RECORD));
      });
      // Its key's digest follows the key too (entry-keys.ts).
      yield REKEY.writeEntry(entry.seq, entry.label, stored);
    },
  };
}

interface MessageRow extends Row {
  seq: number;
  id: string;
  chunks: number;
  content: unknown;
}

/**
 * Re-seals one row under the current key unless it is under that key already, or in clear (sealed too with
 * `sealClear`); true when it did. The row's content hash follows the key, and the row goes through the search
 * index's path for a rewritten row (a row in clear leaves its words' terms for blind ones).
 */
function reseal(driver: SqlDriver, session: OwnedSession, row: MessageRow, at: Rotation): boolean {
  const { id } = at;
  const text = storedText(driver, row.content);
  if (isSealed(text) ? text.startsWith(sealedStart(id)) : !at.sealClear) return false;
  const json = driver.keys!.open(session.session_id, text, row.id);
  const form = storedForm(driver, session.session_id, row.id, json);
  if (!form.sealed || !form.content.startsWith(sealedStart(id))) throw changed(session.session_id);
  const stored = storedContent(driver, form.content);
  if (row.chunks > 0) deleteChunks(driver, row.seq);
  const write = REKEY.writeMessage(row.seq, stored.content, stored.chunks, form.hash);
  driver.run(write.sql, write.params as readonly SqlValue[]);
  writeChunks(driver, row.seq, stored);
  // What the index holds for the row was made under the old key (a blind index's terms are keyed): it is indexed
  // again as a written row is (today a sealed row is not indexed at all, so nothing changes).
  const message = parseMessage(json);
  unindexMessage(driver, row.seq);
  if (message) {
    const sealed = { key: form.key!, content: form.content };
    afterInsert(driver, row.seq, Number(session.num), message, indexedSeq(driver), sealed);
  }
  return true;
}

/** A summary opened and sealed again through the store's keys, which must answer the rotation's key. */
function sealSummary(driver: SqlDriver, at: Rotation, row: SummaryRow): string {
  const keys = driver.keys!;
  const summary = keys.open(row.session_id, row.summary, row.id, "overlay");
  const sealed = keys.sealSummary(row.session_id, row.id, summary);
  if (!sealed?.startsWith(sealedStart(at.id))) throw changed(row.session_id);
  return sealed;
}

function changed(sessionId: string): SessionError {
  return new SessionError(
    "CONFLICT",
    `The keyring's key for session "${sessionId}" changed during a rotation`,
  );
}
