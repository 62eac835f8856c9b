/**
 * SQLite's table for the session import (the program: import.ts): driven synchronously, each batch and the last
 * step inside one write transaction, which excludes every other writer, so the head needs no lock. The items are
 * written by SQLite's own plan (sqlite/transfer/import.ts), which with the head, the search rows and the owner's
 * tokens the engine hands in ({@link SqliteImportHelpers}). Adoption drives the same programs synchronously through
 * {@link insertRegistryRow}, {@link writeItems} and {@link setLeaf}.
 */

import type { SessionInfo } from "../../contract/registry.js";
import type { TransferSession } from "../../contract/transfer.js";
import type { LoggedChange } from "../../store/feed/remote.js";
import { sessionInfoValues } from "../../store/registry-rows.js";
import { importedName } from "../../store/session-names.js";
import { AttachmentImport } from "../../store/transfer/attachments.js";
import type { SessionImportWriter, TransferBatch } from "../../store/transfer/base.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { call, runProgram } from "../engines/sqlite/program.js";
import { command, perform, query, routine } from "../program.js";
import { NEXT_ACTIVITY } from "../registry/sqlite.js";
import {
  type ImportCounted,
  type ImportTable,
  importBatch,
  type LeafStatements,
  registerSession,
  setLeaf as setLeafProgram,
  sqlSessionImport,
} from "./import.js";

const REGISTER = `INSERT INTO agent_sessions (id, name, parent_session_id, model, source, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, estimated_cost, end_reason, created_at, updated_at, owner, pinned, activity)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${NEXT_ACTIVITY})
     ON CONFLICT (id) DO NOTHING RETURNING id`;

/** What the import's table runs of SQLite's middle, handed in by the engine (sqlite/transfer/import.ts). */
export interface SqliteImportHelpers {
  /** The session's head, created when missing (sqlite/append.ts ensureHead): its number. */
  head(driver: SqlDriver, sessionId: string): number;
  /** A batch's items, SQLite's own plan (sqlite/transfer/import.ts writeBatchItems): how many were inserted. */
  items(
    driver: SqlDriver,
    session: { num: number; id: string },
    batch: Readonly<TransferBatch>,
    result: ImportCounted,
    attachments: AttachmentImport,
  ): number;
  /** The owner's token on the messages stored already (sql/search/sqlite-retokenize.ts retokenizeOwned). */
  owned(driver: SqlDriver, sessionId: string): void;
  /** The search rows of what is above the watermark (sql/search/sqlite-indexing.ts indexPending). */
  index(driver: SqlDriver): void;
}

/** The change log an import records its `reset` in (sql/change-log/sqlite.ts). */
export interface SqliteImportLog {
  record(change: LoggedChange): number;
}

const leafStatements: LeafStatements = {
  lock: () => undefined,
  leaf: ({ num }, leafId) =>
    query("SELECT seq FROM agent_messages WHERE session_num = ? AND id = ?", [num, leafId]),
  newest: ({ num }) =>
    query(
      `SELECT MAX(m.seq) AS seq FROM agent_messages m WHERE m.session_num = ?
         AND NOT EXISTS (SELECT 1 FROM agent_messages c WHERE c.parent_seq = m.seq)`,
      [num],
    ),
  point: ({ num }, leaf, now) =>
    command("UPDATE agent_session_heads SET leaf_seq = ?, updated_at = ? WHERE num = ?", [leaf, now, num]),
};

/** The import table of a SQLite store on `driver`, logging each import in `log` when there is one. */
export function sqliteImportTable(
  driver: SqlDriver,
  helpers: SqliteImportHelpers,
  log?: SqliteImportLog,
): ImportTable {
  return {
    run: async (program, atomic) =>
      atomic ? driver.transaction(() => runProgram(driver, program)) : runProgram(driver, program),
    name: (info) => perform(() => importedName(driver.keys, info)),
    register: (info, name) =>
      query(REGISTER, [...sessionInfoValues({ ...info, name }), info.pinned === true ? 1 : 0]),
    // The owner's token on the messages stored already (helpers.owned), in the registry row's transaction.
    owned: (sessionId) => routine(() => helpers.owned(driver, sessionId)),
    *head(sessionId) {
      return yield* perform(() => helpers.head(driver, sessionId));
    },
    *items(session, batch, result, attachments) {
      const num = Number(session.num);
      return yield* perform(() => helpers.items(driver, { num, id: session.id }, batch, result, attachments));
    },
    // The count, then the batch's search rows (helpers.index: what is above the watermark).
    *bump({ num }, inserted) {
      yield command("UPDATE agent_session_heads SET message_count = message_count + ? WHERE num = ?", [
        inserted,
        num,
      ]);
      yield routine(() => helpers.index(driver));
    },
    leaf: leafStatements,
    log: (sessionId) => log && call(() => [{ value: log.record({ sessionId, type: "reset", ids: [] }) }]),
  };
}

/** One session import (see StoreTransfer.importSession), logged in `log` when there is one. */
export function sessionImport(
  driver: SqlDriver,
  helpers: SqliteImportHelpers,
  header: TransferSession,
  log: SqliteImportLog | undefined,
): SessionImportWriter {
  return sqlSessionImport(sqliteImportTable(driver, helpers, log), header);
}

/** Adoption's registry row, synchronously: true when written. */
export function insertRegistryRow(
  driver: SqlDriver,
  helpers: SqliteImportHelpers,
  info: SessionInfo,
): boolean {
  const program = registerSession(sqliteImportTable(driver, helpers), info);
  return info.owner ? driver.transaction(() => runProgram(driver, program)) : runProgram(driver, program);
}

/** Adoption's batch, synchronously, in one write transaction; answers the session's numeric key. */
export function writeItems(
  driver: SqlDriver,
  helpers: SqliteImportHelpers,
  sessionId: string,
  items: TransferBatch,
  result: ImportCounted,
  attachments = new AttachmentImport(),
): number {
  const table = sqliteImportTable(driver, helpers);
  const batch = importBatch(table, sessionId, items, result, attachments);
  return Number(driver.transaction(() => runProgram(driver, batch)).num);
}

/** The exported leaf when it is stored; otherwise the newest childless row, as the reference chooses. */
export function setLeaf(driver: SqlDriver, num: number, leafId: string | null): void {
  runProgram(driver, setLeafProgram(leafStatements, { num, id: "" }, leafId));
}
