import { idsToKnow, rowRecord } from "../../context/legacy-records.js";
import { recordParams } from "../../context/records.js";
import type { StoredCompaction } from "../../contract/message.js";
import type { SessionInfo } from "../../contract/registry.js";
import type {
  SessionImportResult,
  TransferItem,
  TransferMessage,
  TransferRow,
  TransferSession,
} from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { sessionInfoValues } from "../../store/registry-rows.js";
import { importedName } from "../../store/session-names.js";
import { command, query } from "../../store/sql/program.js";
import { AttachmentImport } from "../../store/transfer/attachments.js";
import type { RowImportWriter, SessionImportWriter } from "../../store/transfer/base.js";
import { type LeafStatements, setLeaf as setLeafProgram } from "../../store/transfer/sql-import.js";
import { assertTransferMessage, messageFacts } from "../../store/transfer/stream.js";
import { ensureHead } from "../append.js";
import { storedContent, writeChunks } from "../chunks.js";
import type { SqlDriver } from "../connection/driver.js";
import { runProgram } from "../connection/program.js";
import { knownIds } from "../context-records.js";
import type { SqliteChangeLog } from "../feed/change-log.js";
import { planImportLinks } from "../media/attachments.js";
import { NEXT_ACTIVITY } from "../registry.js";
import { storedBlock, storedEntry } from "../sealed-context.js";
import { storedForm, storedSummary } from "../sealing.js";
import { indexedSeq, indexPending, indexText } from "../search/indexing.js";
import { retokenizeOwned } from "../search/retokenize.js";
import { jumpFor, nodeById } from "../tree.js";

/**
 * Inserts a registry row with its exact timestamps and counters unless the id is registered; true when written.
 * An owned session's messages stored already take the owner's token (retokenize.ts) in the same transaction.
 */
export function insertRegistryRow(driver: SqlDriver, info: SessionInfo): boolean {
  if (!info.owner) return insertSessionRow(driver, info);
  return driver.transaction(() => {
    const inserted = insertSessionRow(driver, info);
    if (inserted) retokenizeOwned(driver, info.id);
    return inserted;
  });
}

function insertSessionRow(driver: SqlDriver, info: SessionInfo): boolean {
  const row = driver.get(
    `INSERT INTO agent_sessions (id, name, parent_session_id, model, source, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, estimated_cost, end_reason, created_at, updated_at, owner, pinned, activity)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${NEXT_ACTIVITY})
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [...sessionInfoValues({ ...info, name: importedName(driver.keys, info) }), info.pinned === true ? 1 : 0],
  );
  return row !== undefined;
}

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
  const form = storedForm(driver, sessionId, message.id, message.content);
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
  // Under the watermark only when a freed seq was reused; the rest is indexed with the batch (importSession).
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
 * Writes one batch of a session's messages and overlays in one write transaction (creating the session's head on
 * first use), counting inserted and skipped rows into `result`; returns the session's numeric key.
 */
export function writeItems(
  driver: SqlDriver,
  sessionId: string,
  items: readonly Exclude<TransferItem, { kind: "session" }>[],
  result: Pick<SessionImportResult, "messages" | "compactions">,
  attachments = new AttachmentImport(),
): number {
  return driver.transaction(() => {
    const num = ensureHead(driver, sessionId).num;
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
          ? insertMessage(driver, sessionId, num, item.message, indexed, attachments)
          : insertCompaction(driver, sessionId, num, item.compaction);
      if (wrote) counts.inserted++;
      else counts.skipped++;
      if (wrote && item.kind === "message") inserted++;
    }
    if (inserted > 0) {
      driver.run("UPDATE agent_session_heads SET message_count = message_count + ? WHERE num = ?", [
        inserted,
        num,
      ]);
      indexPending(driver);
    }
    return num;
  });
}

/**
 * One session import (see StoreTransfer.importSession): each batch is one write transaction, and the last step one
 * more, the latest leaf (when messages were added) with the import's `reset` row in `log`, so the two commit
 * together.
 */
export function sessionImport(
  driver: SqlDriver,
  header: TransferSession,
  log: SqliteChangeLog | undefined,
): SessionImportWriter {
  let num: number | undefined;
  return {
    register: async (info) => insertRegistryRow(driver, info),
    write: async (batch, result, attachments) => {
      num = writeItems(driver, header.id, batch, result, attachments);
    },
    finish: async (result) =>
      driver.transaction(() => {
        if (result.messages.inserted > 0) setLeaf(driver, num!, header.leafId);
        return log?.record({ sessionId: header.id, type: "reset", ids: [] });
      }),
  };
}

// SQLite's statements for the shared last step (store/transfer/sql-import.ts); its write transaction already
// excludes every other writer, so the head needs no lock.
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

/** The exported leaf when it is stored; otherwise the newest childless row, as the reference chooses. */
export function setLeaf(driver: SqlDriver, num: number, leafId: string | null): void {
  runProgram(driver, setLeafProgram(leafStatements, { num, id: "" }, leafId));
}

/**
 * Inserts a block or entry unless its key is stored (an existing row keeps its content); true when written. Its
 * record is the row's, else the legacy rule's (context/legacy-records.ts importRecords).
 */
export function insertRow(driver: SqlDriver, row: TransferRow, now: string): boolean {
  const [sessionId, owner] = recordParams(rowRecord(row, knownIds(driver, idsToKnow([row]))));
  // Sealed again for an owner with a key (sealed-context.ts): an export holds them opened.
  if (row.kind === "block") {
    return driver.transaction(() => {
      const stored = storedBlock(driver, row.key, row.content, { sessionId, owner });
      return (
        driver.get(
          `INSERT INTO agent_context_blocks (key, content, sealed, updated_at, session_id, owner)
           VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING key`,
          [row.key, stored.content, stored.sealed, now, sessionId, owner],
        ) !== undefined
      );
    });
  }
  return driver.transaction(() => {
    const stored = storedEntry(driver, row.label, row.key, row.content, { sessionId, owner });
    const entry = driver.get<{ seq: number }>(
      `INSERT INTO agent_search_entries (label, key, content, sealed_chars, created_at, updated_at, session_id, owner)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (label, key) DO NOTHING RETURNING seq`,
      [row.label, row.key, stored.content, stored.sealedChars, now, now, sessionId, owner],
    );
    if (entry) {
      driver.run("INSERT INTO agent_search_entries_fts (rowid, text) VALUES (?, ?)", [
        entry.seq,
        stored.text,
      ]);
    }
    return entry !== undefined;
  });
}

/** An import of blocks and entries, row by row, every row stamped with the import's start. */
export function rowsImport(driver: SqlDriver): RowImportWriter {
  const now = new Date().toISOString();
  return { run: 1, write: async (rows) => (insertRow(driver, rows[0]!, now) ? 1 : 0) };
}
