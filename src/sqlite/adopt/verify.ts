/** Reads adopted rows back from our SQLite tables and compares them with what was written (see adopt.ts). */

import { storedText } from "../../sql/engines/sqlite/chunks.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import { sqlText } from "../../sql/engines/sqlite/free-text.js";
import {
  type AdoptionReport,
  assertReadBack,
  compactionPrint,
  compareReadBack,
  fingerprint,
} from "../../store/adopt/adopt.js";
import type { MessageOrder } from "../../store/adopt/order.js";
import { listCompactions } from "../history.js";

const PAGE = 500;

// A split row (see sql/engines/sqlite/chunks.ts) selects its seq, whose pieces are joined; any other row its content as a blob.
function storedJson(driver: SqlDriver, selected: unknown): string {
  return typeof selected === "number" || typeof selected === "bigint"
    ? storedText(driver, selected)
    : sqlText(selected);
}

/** Compares every adopted message with what our tables now hold; a missing one fails the adoption. */
export function verifyMessages(
  driver: SqlDriver,
  sessionId: string,
  { written, inline }: Pick<MessageOrder, "written" | "inline">,
  report: AdoptionReport,
) {
  const seen = new Set<string>();
  for (let after = 0; ; ) {
    const rows = driver.all<{
      seq: number;
      id: string;
      parent_id: string | null;
      created_at: string;
      content: unknown;
    }>(
      `SELECT m.seq, m.id, p.id AS parent_id, m.created_at, CASE WHEN m.chunks = 0 THEN CAST(m.content AS BLOB) ELSE m.seq END AS content
       FROM agent_session_heads h JOIN agent_messages m ON m.session_num = h.num
       LEFT JOIN agent_messages p ON p.seq = m.parent_seq
       WHERE h.session_id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?`,
      [sessionId, after, PAGE],
    );
    for (const row of rows) {
      const expected = written.get(row.id);
      if (expected === undefined) continue;
      seen.add(row.id);
      const actual = fingerprint(row.parent_id, row.created_at, storedJson(driver, row.content));
      compareReadBack(
        report,
        expected,
        actual,
        `assistant_messages:${sessionId}:${row.id}`,
        inline.get(row.id),
      );
    }
    if (rows.length < PAGE) break;
    after = rows.at(-1)!.seq;
  }
  assertAllSeen("message", sessionId, written, seen);
}

/** Compares every adopted overlay with the stored one; a missing one fails the adoption. */
export function verifyCompactions(
  driver: SqlDriver,
  sessionId: string,
  written: Map<string, string>,
  report: AdoptionReport,
) {
  const num = driver.get<{ num: number }>("SELECT num FROM agent_session_heads WHERE session_id = ?", [
    sessionId,
  ]);
  const seen = new Set<string>();
  for (const stored of num ? listCompactions(driver, sessionId, num.num) : []) {
    const expected = written.get(stored.id);
    if (expected === undefined) continue;
    seen.add(stored.id);
    compareReadBack(
      report,
      expected,
      compactionPrint(stored),
      `assistant_compactions:${sessionId}:${stored.id}`,
    );
  }
  assertAllSeen("overlay", sessionId, written, seen);
}

function assertAllSeen(
  what: string,
  sessionId: string,
  written: Map<string, string>,
  seen: Set<string>,
): void {
  const missing = [...written.keys()].filter((id) => !seen.has(id));
  assertReadBack(missing.length, `${what}(s) of session "${sessionId}"`, missing[0]);
}
