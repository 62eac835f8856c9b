/**
 * The SQL stores' session import, written once for SQLite and Postgres: the registry row, each batch (the head
 * created and locked, the items written, the head's count bumped) and the last step (the latest leaf and the
 * import's `reset` row, which commit together) are programs (sql/program.ts) over a table per engine
 * (`sqlite-import.ts`, `postgres-import.ts` beside this file), driven synchronously
 * inside SQLite's write transaction and awaited inside a Postgres one. How a batch's items are written is each
 * engine's own, on purpose: SQLite writes item by item inside its one write transaction (chunked content, FTS
 * rows), Postgres a batch's messages in one `unnest` INSERT whose tree columns it computes from the stored parents'
 * spines, so a batch costs a few round trips however long it is (sqlite/ and postgres/transfer/import.ts).
 */

import type { SessionInfo } from "../../contract/registry.js";
import type { SessionImportResult, TransferSession } from "../../contract/transfer.js";
import type { AttachmentImport } from "../../store/transfer/attachments.js";
import type { SessionImportWriter, TransferBatch } from "../../store/transfer/base.js";
import type { Program, Statement, Step } from "../program.js";

/** A session as the import's statements name it: its head's number, and its id (Citus routes by it). */
export interface ImportedSession {
  num: number | string;
  id: string;
}

/** What a batch counts its inserted and skipped rows into (an import's result, an adoption's report). */
export type ImportCounted = Pick<SessionImportResult, "messages" | "compactions">;

/** One engine's statements for {@link setLeaf}. */
export interface LeafStatements {
  /** Locks the head row (none where the write transaction already excludes every writer); no row: it is gone. */
  lock(session: ImportedSession): Statement | undefined;
  /** The stored row (`seq`) of the exported leaf. */
  leaf(session: ImportedSession, leafId: string): Statement;
  /** The newest childless row (`seq`, null without one). */
  newest(session: ImportedSession): Statement;
  /** Points the head at `leaf` (null: no messages), stamped `now`. */
  point(session: ImportedSession, leaf: unknown, now: string): Statement;
}

/** One engine's statements and writers for a session import. */
export interface ImportTable {
  /**
   * Runs a program: synchronously on SQLite, awaited on Postgres; in one write transaction when `atomic`, else
   * each statement on its own.
   */
  run<T>(program: Program<T>, atomic: boolean): Promise<T>;
  /** The session's name as imported (sealed for an owner with a key: a key look-up, awaited on Postgres). */
  name(info: SessionInfo): Program<string>;
  /** Inserts the registry row named `name` unless the id is registered; answers a row when it wrote one. */
  register(info: SessionInfo, name: string): Statement;
  /**
   * SQLite: gives an owned session's messages stored already the owner's token, in the registry row's transaction
   * (Postgres' `register` does it in the same statement, so it has none).
   */
  owned?(sessionId: string): Step;
  /** Creates the session's head when missing, locked as every session write locks it; answers its number. */
  head(sessionId: string): Program<number | string>;
  /** Writes a batch's items by the engine's own plan, counting into `result`; answers how many messages it added. */
  items(
    session: ImportedSession,
    batch: TransferBatch,
    result: ImportCounted,
    attachments: AttachmentImport,
  ): Program<number>;
  /** After a batch that added `inserted` messages: the head's count (and what else the engine keeps per batch). */
  bump(session: ImportedSession, inserted: number): Program<void>;
  readonly leaf: LeafStatements;
  /** Writes the import's `reset` row in the store's change log (answers `value`: its cursor); none without a log. */
  log(sessionId: string): Step | undefined;
}

/** Inserts a registry row with its exact timestamps and counters unless the id is registered; true when written. */
export function* registerSession(table: ImportTable, info: SessionInfo): Program<boolean> {
  const name = yield* table.name(info);
  const inserted = (yield table.register(info, name)).length > 0;
  if (inserted && info.owner && table.owned) yield table.owned(info.id);
  return inserted;
}

/** Writes one batch of a session's items (creating its head on first use); answers the session's head. */
export function* importBatch(
  table: ImportTable,
  sessionId: string,
  batch: TransferBatch,
  result: ImportCounted,
  attachments: AttachmentImport,
): Program<ImportedSession> {
  const session = { num: yield* table.head(sessionId), id: sessionId };
  const inserted = yield* table.items(session, batch, result, attachments);
  if (inserted > 0) yield* table.bump(session, inserted);
  return session;
}

/** Sets the session's latest leaf after an import: the exported one when it is stored, else the newest childless row. */
export function* setLeaf(
  table: LeafStatements,
  session: ImportedSession,
  leafId: string | null,
): Program<void> {
  const lock = table.lock(session);
  if (lock && (yield lock).length === 0) return;
  const [stored] = leafId === null ? [] : yield table.leaf(session, leafId);
  const leaf = stored?.seq ?? (yield table.newest(session))[0]?.seq ?? null;
  yield table.point(session, leaf, new Date().toISOString());
}

/** The last step: the latest leaf of `session` (given when messages were added) and the `reset` row; answers its cursor. */
function* finishImport(
  table: ImportTable,
  session: ImportedSession | undefined,
  leafId: string | null,
  log: Step | undefined,
): Program<number | undefined> {
  if (session) yield* setLeaf(table.leaf, session, leafId);
  return log ? ((yield log)[0]?.value as number) : undefined;
}

/**
 * One session import (see StoreTransfer.importSession): the registry row, then each batch in one write transaction,
 * and a last one for the latest leaf and the `reset` row when the import added anything worth them.
 */
export function sqlSessionImport(table: ImportTable, header: TransferSession): SessionImportWriter {
  let session: ImportedSession | undefined;
  return {
    // Only SQLite's owned row takes a second statement, so only it needs a transaction.
    register: (info) =>
      table.run(registerSession(table, info), Boolean(info.owner) && table.owned !== undefined),
    write: async (batch, result, attachments) => {
      session = await table.run(importBatch(table, header.id, batch, result, attachments), true);
    },
    finish: async (result) => {
      const leafOf = result.messages.inserted > 0 ? session : undefined;
      const log = table.log(header.id);
      if (!leafOf && !log) return undefined;
      return table.run(finishImport(table, leafOf, header.leafId, log), true);
    },
  };
}
