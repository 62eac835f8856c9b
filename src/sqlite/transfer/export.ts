import { recordOf } from "../../context/records.js";
import type { StoredCompaction } from "../../contract/message.js";
import type { TransferMessage, TransferRow, TransferSession } from "../../contract/transfer.js";
import {
  type RowImportWriter,
  type SessionImportWriter,
  type SessionSums,
  StoreTransfer,
} from "../../store/transfer/base.js";
import type { SqliteBackend } from "../backend.js";
import { contentSql, resolveContent } from "../chunks.js";
import type { SqlDriver } from "../connection/driver.js";
import { freeTextSql } from "../connection/free-text.js";
import { compactionOf, type EncodedCompactionRow } from "../history.js";
import { loadAttachments } from "../media/tables.js";
import { SqliteSessionRegistry } from "../registry.js";
import { type BlockReadRow, type EntryRow, entryOpener, readBlockRow } from "../sealed-context.js";

/** A context row's record columns (context-records.ts). */
type RecordRow = { session_id: string | null; owner: string | null };

import { rowsImport, sessionImport } from "./import.js";

// Rows per read: big enough that paging costs little, small enough that memory stays flat on huge sessions.
const PAGE = 1000;

/** A session's head as a transfer reads it. */
interface Head {
  num: number;
  leaf_seq: number | null;
  /** The session's id: an encrypted owner's content is opened with it (sealed content is bound to it). */
  session_id: string;
}

interface MessageRow {
  seq: number;
  id: string;
  parent_id: string | null;
  role: string;
  created_at: string;
  /** The JSON, or the seq of a message split across continuation rows (chunks.ts). */
  content: unknown;
}

/**
 * Lossless, streaming export and import for a SQLite store. Every listing is read in keyset pages, so exporting
 * a store of any size holds one page at a time; a session's messages come in storage order, which puts parents
 * before their children.
 */
export class SqliteTransfer extends StoreTransfer<Head> {
  /** `store`: the feed and change log an import publishes to, read at each import (the store makes them after this). */
  constructor(
    private readonly driver: SqlDriver,
    private readonly store?: Pick<SqliteBackend, "feed" | "changeLog">,
  ) {
    super(new SqliteSessionRegistry(driver), store);
  }

  async *sessionIds(): AsyncGenerator<string> {
    // Oldest activity first, so importing the ids in this order reproduces list()'s order, ties included.
    // Row-value keyset from ('', 0), below every real row: one range scan of agent_sessions_recent per page.
    let after = { updated_at: "", activity: 0 };
    for (;;) {
      const rows: { id: string; updated_at: string; activity: number }[] = this.driver.all(
        `SELECT id, updated_at, activity FROM agent_sessions WHERE (updated_at, activity) > (?, ?)
         ORDER BY updated_at, activity LIMIT ?`,
        [after.updated_at, after.activity, PAGE],
      );
      for (const row of rows) yield row.id;
      after = rows[rows.length - 1] ?? after;
      if (rows.length < PAGE) break;
    }
    // Then the sessions holding data that the pass above did not name: never registered, or registered after it
    // read past their place (their activity lies beyond its last key). A session registered between the two passes
    // was otherwise in neither.
    let afterId: string | null = null;
    for (;;) {
      const rows: { session_id: string }[] = this.driver.all(
        `SELECT h.session_id FROM agent_session_heads h
         WHERE ${afterId === null ? "1" : "h.session_id > ?"}
           AND NOT EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = h.session_id
             AND (s.updated_at, s.activity) <= (?, ?))
           AND (h.message_count > 0 OR EXISTS (SELECT 1 FROM agent_compactions c WHERE c.session_num = h.num))
         ORDER BY h.session_id LIMIT ?`,
        [...(afterId === null ? [] : [afterId]), after.updated_at, after.activity, PAGE],
      );
      for (const row of rows) yield row.session_id;
      if (rows.length < PAGE) break;
      afterId = rows[rows.length - 1]!.session_id;
    }
  }

  protected assertOpen(): void {}

  protected async readHead(sessionId: string): Promise<Head | undefined> {
    return this.driver.get("SELECT num, leaf_seq, session_id FROM agent_session_heads WHERE session_id = ?", [
      sessionId,
    ]);
  }

  protected async readLeafId(head: Head): Promise<string | null> {
    if (head.leaf_seq === null) return null;
    const leaf = this.driver.get<{ id: string }>("SELECT id FROM agent_messages WHERE seq = ?", [
      head.leaf_seq,
    ]);
    return leaf?.id ?? null;
  }

  protected async readSums(head: Head): Promise<SessionSums | undefined> {
    const sums = this.driver.get<{ n: number; bytes: number | null; tokens: number | null }>(
      "SELECT COUNT(*) AS n, SUM(bytes) AS bytes, SUM(tokens) AS tokens FROM agent_messages WHERE session_num = ?",
      [head.num],
    );
    const compactions = this.driver.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM agent_compactions WHERE session_num = ?",
      [head.num],
    );
    return { messages: sums?.n, compactions: compactions?.n, bytes: sums?.bytes, tokens: sums?.tokens };
  }

  protected async *readMessages(head: Head): AsyncGenerator<TransferMessage> {
    for (let after = 0; ; ) {
      // Seqs first from the (session_num, id) index alone, then only those rows: a page never reads the content
      // of the rest of the session.
      const seqs = this.driver
        .all<{ seq: number }>(
          "SELECT seq FROM agent_messages WHERE session_num = ? AND seq > ? ORDER BY seq LIMIT ?",
          [head.num, after, PAGE],
        )
        .map((r) => r.seq);
      if (seqs.length === 0) break;
      const rows = this.driver.all<MessageRow>(
        `SELECT m.seq, m.id, p.id AS parent_id, m.role, m.created_at, ${contentSql("m")} AS content FROM agent_messages m
         LEFT JOIN agent_messages p ON p.seq = m.parent_seq
         WHERE m.seq IN (SELECT value FROM json_each(?)) ORDER BY m.seq`,
        [JSON.stringify(seqs)],
      );
      for (const row of rows) {
        const { id, parent_id: parentId, role, created_at: createdAt } = row;
        yield {
          id,
          parentId,
          role,
          createdAt,
          content: resolveContent(this.driver, row.content, head.session_id, id),
        };
      }
      if (seqs.length < PAGE) break;
      after = seqs[seqs.length - 1]!;
    }
  }

  protected readAttachment(hash: string): Uint8Array | null {
    return loadAttachments(this.driver, [hash]).get(hash) ?? null;
  }

  protected async *readCompactions(head: Head): AsyncGenerator<StoredCompaction> {
    for (let after = 0; ; ) {
      const rows = this.driver.all<EncodedCompactionRow & { seq: number }>(
        `SELECT seq, id, ${freeTextSql("summary", "summary")}, from_message_id, to_message_id, details, created_at
         FROM agent_compactions
         WHERE session_num = ? AND seq > ? ORDER BY seq LIMIT ?`,
        [head.num, after, PAGE],
      );
      for (const row of rows) yield compactionOf(this.driver, head.session_id, row);
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.seq;
    }
  }

  /** One session import (see import.ts), logged in the store's change log when it has one. */
  protected async openImport(header: TransferSession): Promise<SessionImportWriter> {
    return sessionImport(this.driver, header, this.store?.changeLog);
  }

  protected async openRows(): Promise<RowImportWriter> {
    return rowsImport(this.driver);
  }

  async *exportRows(): AsyncGenerator<TransferRow> {
    for (let after: string | null = null; ; ) {
      // Sealed blocks and entries are exported opened (sealed-context.ts), as sealed messages are.
      const rows: (BlockReadRow & { key: string } & RecordRow)[] = this.driver.all(
        `SELECT key, ${freeTextSql("content", "content")}, sealed, session_id, owner FROM agent_context_blocks
           WHERE ${after === null ? "1" : "key > ?"} ORDER BY key LIMIT ?`,
        after === null ? [PAGE] : [after, PAGE],
      );
      for (const row of rows) {
        const content = readBlockRow(this.driver, row.key, row);
        yield { kind: "block", key: row.key, content, ...recordOf(row.session_id, row.owner) };
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.key;
    }
    // Entries in storage order: search ranks ties newest first, so the order is part of what must survive.
    for (let after = 0; ; ) {
      const rows: (EntryRow & { seq: number; label: string; key: string } & RecordRow)[] = this.driver.all(
        `SELECT seq, label, key, ${freeTextSql("content", "content")}, sealed_chars, session_id, owner
         FROM agent_search_entries
         WHERE seq > ? ORDER BY seq LIMIT ?`,
        [after, PAGE],
      );
      for (const row of rows) {
        const content = entryOpener(this.driver, row.label)(row.key, row);
        yield {
          kind: "entry",
          label: row.label,
          key: row.key,
          content,
          ...recordOf(row.session_id, row.owner),
        };
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.seq;
    }
  }
}
