/**
 * SQLite's table for the session import (the program: sql/transfer/import.ts): driven synchronously, each
 * batch and the last step inside one write transaction, which excludes every other writer, so the head needs no
 * lock. The items are written by SQLite's own plan (transfer/import.ts). Adoption drives the same programs
 * synchronously through {@link insertRegistryRow}, {@link writeItems} and {@link setLeaf}.
 */

import type { SessionInfo } from "../../contract/registry.js";
import type { TransferSession } from "../../contract/transfer.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import { call, runProgram } from "../../sql/engines/sqlite/program.js";
import { command, perform, query, routine } from "../../sql/program.js";
import {
  type ImportCounted,
  type ImportTable,
  importBatch,
  type LeafStatements,
  registerSession,
  setLeaf as setLeafProgram,
  sqlSessionImport,
} from "../../sql/transfer/import.js";
import { sessionInfoValues } from "../../store/registry-rows.js";
import { importedName } from "../../store/session-names.js";
import { AttachmentImport } from "../../store/transfer/attachments.js";
import type { SessionImportWriter, TransferBatch } from "../../store/transfer/base.js";
import { ensureHead } from "../append.js";
import type { SqliteChangeLog } from "../feed/change-log.js";
import { NEXT_ACTIVITY } from "../registry.js";
import { indexPending } from "../search/indexing.js";
import { retokenizeOwned } from "../search/retokenize.js";
import { writeBatchItems } from "../transfer/import.js";

const REGISTER = `INSERT INTO agent_sessions (id, name, parent_session_id, model, source, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, estimated_cost, end_reason, created_at, updated_at, owner, pinned, activity)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${NEXT_ACTIVITY})
     ON CONFLICT (id) DO NOTHING RETURNING id`;

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
export function sqliteImportTable(driver: SqlDriver, log?: SqliteChangeLog): ImportTable {
  return {
    run: async (program, atomic) =>
      atomic ? driver.transaction(() => runProgram(driver, program)) : runProgram(driver, program),
    name: (info) => perform(() => importedName(driver.keys, info)),
    register: (info, name) =>
      query(REGISTER, [...sessionInfoValues({ ...info, name }), info.pinned === true ? 1 : 0]),
    // The owner's token on the messages stored already (retokenize.ts), in the registry row's transaction.
    owned: (sessionId) => routine(() => void retokenizeOwned(driver, sessionId)),
    *head(sessionId) {
      return yield* perform(() => ensureHead(driver, sessionId).num);
    },
    *items(session, batch, result, attachments) {
      const num = Number(session.num);
      return yield* perform(() =>
        writeBatchItems(driver, { num, id: session.id }, batch, result, attachments),
      );
    },
    // The count, then the batch's search rows (indexing.ts: what is above the watermark).
    *bump({ num }, inserted) {
      yield command("UPDATE agent_session_heads SET message_count = message_count + ? WHERE num = ?", [
        inserted,
        num,
      ]);
      yield routine(() => void indexPending(driver));
    },
    leaf: leafStatements,
    log: (sessionId) => log && call(() => [{ value: log.record({ sessionId, type: "reset", ids: [] }) }]),
  };
}

/** One session import (see StoreTransfer.importSession), logged in `log` when there is one. */
export function sessionImport(
  driver: SqlDriver,
  header: TransferSession,
  log: SqliteChangeLog | undefined,
): SessionImportWriter {
  return sqlSessionImport(sqliteImportTable(driver, log), header);
}

/** Adoption's registry row, synchronously: true when written. */
export function insertRegistryRow(driver: SqlDriver, info: SessionInfo): boolean {
  const program = registerSession(sqliteImportTable(driver), info);
  return info.owner ? driver.transaction(() => runProgram(driver, program)) : runProgram(driver, program);
}

/** Adoption's batch, synchronously, in one write transaction; answers the session's numeric key. */
export function writeItems(
  driver: SqlDriver,
  sessionId: string,
  items: TransferBatch,
  result: ImportCounted,
  attachments = new AttachmentImport(),
): number {
  const table = sqliteImportTable(driver);
  const batch = importBatch(table, sessionId, items, result, attachments);
  return Number(driver.transaction(() => runProgram(driver, batch)).num);
}

/** The exported leaf when it is stored; otherwise the newest childless row, as the reference chooses. */
export function setLeaf(driver: SqlDriver, num: number, leafId: string | null): void {
  runProgram(driver, setLeafProgram(leafStatements, { num, id: "" }, leafId));
}
