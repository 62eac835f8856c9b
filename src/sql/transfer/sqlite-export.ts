/**
 * SQLite's statements for the transfer's export (export.ts): listings in keyset pages along an index, a message's
 * content read from its chunks (sql/engines/sqlite/chunks.ts). Overlays, payloads, blocks and entries are opened by
 * the engine's own helpers (an encrypted owner's seal), which sqlite/transfer/export.ts hands in.
 */

import { recordOf } from "../../context/records.js";
import type { SessionSums } from "../../store/transfer/base.js";
import { contentSql, resolveContent } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { freeTextSql } from "../engines/sqlite/free-text.js";
import { runProgram } from "../engines/sqlite/program.js";
import { type Program, query } from "../program.js";
import { type ExportTable, PAGE, type Page, type TransferHead } from "./export.js";

/** A session's head as a transfer reads it. */
export interface SqliteHead extends TransferHead {
  num: number;
  leaf_seq: number | null;
}

/** What the export table opens with SQLite's own helpers (history.ts, media/, sealed-context.ts). */
export type SqliteExportOpeners = Pick<
  ExportTable<SqliteHead>,
  "openCompaction" | "attachment" | "openBlock" | "openEntry"
>;

/** The export table of a SQLite store on `driver`, opening rows with `openers`. */
export function sqliteExportTable(driver: SqlDriver, openers: SqliteExportOpeners): ExportTable<SqliteHead> {
  return {
    ...openers,
    run: <T>(program: Program<T>) => runProgram(driver, program),
    // Row-value keyset from ('', 0), below every real row: one range scan of agent_sessions_recent per page.
    registeredStart: ["", 0],
    registered: (after) =>
      query(
        `SELECT id, updated_at AS after_at, activity FROM agent_sessions WHERE (updated_at, activity) > (?, ?)
         ORDER BY updated_at, activity LIMIT ?`,
        [...after, PAGE],
      ),
    unregistered: (last, afterId) =>
      query(
        `SELECT h.session_id FROM agent_session_heads h
         WHERE ${afterId === null ? "1" : "h.session_id > ?"}
           AND NOT EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = h.session_id
             AND (s.updated_at, s.activity) <= (?, ?))
           AND (h.message_count > 0 OR EXISTS (SELECT 1 FROM agent_compactions c WHERE c.session_num = h.num))
         ORDER BY h.session_id LIMIT ?`,
        [...(afterId === null ? [] : [afterId]), ...last, PAGE],
      ),
    head: (sessionId) =>
      query("SELECT num, leaf_seq, session_id FROM agent_session_heads WHERE session_id = ?", [sessionId]),
    *leafId(head): Program<string | null> {
      if (head.leaf_seq === null) return null;
      const [leaf] = yield query("SELECT id FROM agent_messages WHERE seq = ?", [head.leaf_seq]);
      return (leaf?.id as string | undefined) ?? null;
    },
    *sums(head): Program<SessionSums | undefined> {
      const [sums] = yield query(
        "SELECT COUNT(*) AS n, SUM(bytes) AS bytes, SUM(tokens) AS tokens FROM agent_messages WHERE session_num = ?",
        [head.num],
      );
      const [compactions] = yield query("SELECT COUNT(*) AS n FROM agent_compactions WHERE session_num = ?", [
        head.num,
      ]);
      return {
        messages: sums?.n,
        compactions: compactions?.n,
        bytes: sums?.bytes,
        tokens: sums?.tokens,
      } as SessionSums;
    },
    *messages(head, after): Program<Page> {
      // Seqs first from the (session_num, id) index alone, then only those rows: a page never reads the content of
      // the rest of the session.
      const seqs = (yield query(
        "SELECT seq FROM agent_messages WHERE session_num = ? AND seq > ? ORDER BY seq LIMIT ?",
        [head.num, after, PAGE],
      )).map((r) => r.seq as number);
      if (seqs.length === 0) return { rows: [], more: undefined };
      const rows = yield query(
        `SELECT m.seq, m.id, p.id AS parent_id, m.role, m.created_at, ${contentSql("m")} AS content FROM agent_messages m
         LEFT JOIN agent_messages p ON p.seq = m.parent_seq
         WHERE m.seq IN (SELECT value FROM json_each(?)) ORDER BY m.seq`,
        [JSON.stringify(seqs)],
      );
      return { rows, more: seqs.length < PAGE ? undefined : { seq: seqs[seqs.length - 1] } };
    },
    parentsFirst: false,
    openMessage: (head, row) => resolveContent(driver, row.content, head.session_id, row.id),
    compactions: (head, after) =>
      query(
        `SELECT seq, id, ${freeTextSql("summary", "summary")}, from_message_id, to_message_id, details, created_at
         FROM agent_compactions
         WHERE session_num = ? AND seq > ? ORDER BY seq LIMIT ?`,
        [head.num, after, PAGE],
      ),
    blocks: (after) =>
      query(
        `SELECT key, ${freeTextSql("content", "content")}, sealed, session_id, owner FROM agent_context_blocks
           WHERE ${after === null ? "1" : "key > ?"} ORDER BY key LIMIT ?`,
        after === null ? [PAGE] : [after, PAGE],
      ),
    entries: (after) =>
      query(
        `SELECT seq, label, key, ${freeTextSql("content", "content")}, sealed_chars, session_id, owner
         FROM agent_search_entries
         WHERE seq > ? ORDER BY seq LIMIT ?`,
        [after, PAGE],
      ),
    record: (row) => recordOf(row.session_id as string | null, row.owner as string | null),
  };
}
