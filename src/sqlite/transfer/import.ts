/**
 * SQLite's own plan for an import's items (the steps around them are the SQL stores' one program, sql/transfer/import.ts, over sql/transfer/sqlite-import.ts): item by item inside the batch's one write transaction, each
 * message's tree columns read from its parent's row, its content chunked (sql/engines/sqlite/chunks.ts) and indexed for FTS, where
 * Postgres writes a batch's messages in one statement. Blocks and entries go row by row, each with its FTS row.
 */

import { idsToKnow, rowRecord } from "../../context/legacy-records.js";
import { recordParams } from "../../context/records.js";
import type { StoredCompaction } from "../../contract/message.js";
import type { TransferMessage, TransferRow } from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { knownIds } from "../../sql/context-records/sqlite.js";
import { storedBlock, storedEntry } from "../../sql/context-store/sqlite-sealed.js";
import { storedContent, writeChunks } from "../../sql/engines/sqlite/chunks.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import { jumpFor, nodeById } from "../../sql/engines/sqlite/tree.js";
import { planImportLinks } from "../../sql/media/sqlite.js";
import { storedForm, storedSummary } from "../../sql/sealing/sqlite.js";
import { indexedSeq, indexPending, indexText } from "../../sql/search/sqlite-indexing.js";
import { retokenizeOwned } from "../../sql/search/sqlite-retokenize.js";
import type { ImportCounted } from "../../sql/transfer/import.js";
import type { SqliteImportHelpers } from "../../sql/transfer/sqlite-import.js";
import type { AttachmentImport } from "../../store/transfer/attachments.js";
import type { RowImportWriter, TransferBatch } from "../../store/transfer/base.js";
import { assertTransferMessage, messageFacts } from "../../store/transfer/stream.js";
import { ensureHead } from "../append.js";

/** Inserts one message as an append would (tree columns, totals, search row), but with its own parent and time. */
export function insertMessage(
  driver: SqlDriver,
  sessionId: string,
  num: number,
  message: TransferMessage,
  indexed: number,
  attachments: AttachmentImport,
): boolean {
  assertTransferMessage(message);
  if (
    driver.get("SELECT 1 AS found FROM agent_messages WHERE session_num = ? AND id = ?", [num, message.id])
  ) {
    return false;
  }
  const parent = message.parentId === null ? undefined : nodeById(driver, num, message.parentId);
  if (message.parentId !== null && !parent) {
    throw new SessionError(
      "PARENT_NOT_FOUND",
      `Parent message "${message.parentId}" of "${message.id}" is not in session "${sessionId}"`,
    );
  }
  const linkPayloads = planImportLinks(driver, num, message.id, message.content, attachments);
  const facts = messageFacts(message);
  const jump = parent ? jumpFor(driver, parent) : null;
  const form = storedForm(driver, sessionId, message.id, message.content, undefined, false);
  const stored = storedContent(driver, form.content);
  const row = driver.get<{ seq: number }>(
    `INSERT INTO agent_messages (session_num, id, parent_seq, role, content, created_at, depth, jump_seq, jump_depth,
       bytes, cum_bytes, tokens, cum_tokens, chunks, content_hash)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    [
      num,
      message.id,
      parent ? parent.seq : null,
      facts.role,
      stored.content,
      message.createdAt,
      parent ? parent.depth + 1 : 0,
      jump ? jump.seq : null,
      jump ? jump.depth : 0,
      facts.bytes,
      (parent?.cum_bytes ?? 0) + facts.bytes,
      facts.tokens,
      (parent?.cum_tokens ?? 0) + facts.tokens,
      stored.chunks,
      form.hash,
    ],
  )!;
  writeChunks(driver, row.seq, stored);
  linkPayloads(row.seq);
  // Under the watermark only when a freed seq was reused; the rest is indexed with the batch (the table's `bump`,
  // sql/transfer/sqlite-import.ts).
  if (row.seq <= indexed && !form.sealed) indexText(driver, row.seq, num, facts.text);
  return true;
}

/**
 * Inserts an overlay with its own id and time unless the id is stored (its summary sealed for an encrypted owner);
 * true when written.
 */
export function insertCompaction(
  driver: SqlDriver,
  sessionId: string,
  num: number,
  compaction: StoredCompaction,
): boolean {
  const row = driver.get(
    `INSERT INTO agent_compactions (session_num, id, summary, from_message_id, to_message_id, details, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING seq`,
    [
      num,
      compaction.id,
      storedSummary(driver, sessionId, compaction.id, compaction.summary).value,
      compaction.fromMessageId,
      compaction.toMessageId,
      compaction.details === undefined ? null : JSON.stringify(compaction.details),
      compaction.createdAt,
    ],
  );
  return row !== undefined;
}

/**
 * Writes one batch's messages and overlays item by item, inside the batch's write transaction (sql/transfer/import.ts), counting inserted and skipped rows into `result`; answers how many messages it added.
 */
export function writeBatchItems(
  driver: SqlDriver,
  { num, id }: { num: number; id: string },
  items: Readonly<TransferBatch>,
  result: ImportCounted,
  attachments: AttachmentImport,
): number {
  const indexed = indexedSeq(driver);
  let inserted = 0;
  for (const item of items) {
    if (item.kind === "attachment") {
      attachments.accept(item.attachment);
      continue;
    }
    const counts = item.kind === "message" ? result.messages : result.compactions;
    const wrote =
      item.kind === "message"
        ? insertMessage(driver, id, num, item.message, indexed, attachments)
        : insertCompaction(driver, id, num, item.compaction);
    if (wrote) counts.inserted++;
    else counts.skipped++;
    if (wrote && item.kind === "message") inserted++;
  }
  return inserted;
}

/**
 * Inserts a block or entry unless its key is stored (an existing row keeps its content); `inserted` when written,
 * and the key as stored (an encrypted owner's entry keeps a keyed digest of it, entry-keys.ts). Its record is the
 * row's, else the legacy rule's (context/legacy-records.ts importRecords).
 */
export function insertRow(
  driver: SqlDriver,
  row: TransferRow,
  now: string,
): { inserted: boolean; key: string } {
  const [sessionId, owner] = recordParams(rowRecord(row, knownIds(driver, idsToKnow([row]))));
  // Sealed again for an owner with a key (sealed-context.ts): an export holds them opened.
  if (row.kind === "block") {
    return driver.transaction(() => {
      const stored = storedBlock(driver, row.key, row.content, { sessionId, owner });
      const inserted =
        driver.get(
          `INSERT INTO agent_context_blocks (key, content, sealed, updated_at, session_id, owner)
           VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING key`,
          [row.key, stored.content, stored.sealed, now, sessionId, owner],
        ) !== undefined;
      return { inserted, key: row.key };
    });
  }
  return driver.transaction(() => {
    const stored = storedEntry(driver, row.label, row.key, row.content, { sessionId, owner });
    const entry = driver.get<{ seq: number }>(
      `INSERT INTO agent_search_entries (label, key, content, sealed_chars, created_at, updated_at, session_id, owner)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (label, key) DO NOTHING RETURNING seq`,
      [row.label, stored.key, stored.content, stored.sealedChars, now, now, sessionId, owner],
    );
    if (entry) {
      driver.run("INSERT INTO agent_search_entries_fts (rowid, text) VALUES (?, ?)", [
        entry.seq,
        stored.text,
      ]);
    }
    return { inserted: entry !== undefined, key: stored.key };
  });
}

/** An import of blocks and entries, row by row, every row stamped with the import's start. */
export function rowsImport(driver: SqlDriver): RowImportWriter {
  const now = new Date().toISOString();
  return { run: 1, write: async (rows) => (insertRow(driver, rows[0]!, now).inserted ? 1 : 0) };
}

/** What the session import's table (sql/transfer/sqlite-import.ts) runs of SQLite's own modules. */
export const SQLITE_IMPORT: SqliteImportHelpers = {
  head: (driver, sessionId) => ensureHead(driver, sessionId).num,
  items: writeBatchItems,
  owned: (driver, sessionId) => void retokenizeOwned(driver, sessionId),
  index: (driver) => void indexPending(driver),
};
