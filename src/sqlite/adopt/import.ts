/**
 * SQLite's adoption writes (its table: sql/adopt/sqlite.ts): a session's registry row, then its messages and
 * overlays a page (one transaction) at a time through the transfer import's own inserts, synchronously; every
 * adopted row is read back from our tables and compared (verify.ts).
 */

import type { SessionInfo } from "../../contract/registry.js";
import type { AdoptionRun, AdoptionWrites, RowsAdoption, SessionAdoption } from "../../sql/adopt/steps.js";
import {
  type BlockReadRow,
  type EntryRow,
  entryOpener,
  readBlockRow,
} from "../../sql/context-store/sqlite-sealed.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import { freeTextSql } from "../../sql/engines/sqlite/free-text.js";
import { routine } from "../../sql/program.js";
import { insertRegistryRow, setLeaf, writeItems } from "../../sql/transfer/sqlite-import.js";
import { assertReadBack, compareReadBack } from "../../store/adopt/adopt.js";
import { contextRowName } from "../../store/adopt/context.js";
import { compareRegistryRow } from "../../store/adopt/registry.js";
import { type SessionInfoRow, toSessionInfo } from "../../store/registry-rows.js";
import { openedName } from "../../store/session-names.js";
import { insertRow, SQLITE_IMPORT } from "../transfer/import.js";
import { verifyCompactions, verifyMessages } from "./verify.js";

// The reference's own choice of the latest leaf: the newest childless row. Written as NOT EXISTS so the child
// probe uses the reference's parent_id index (`+` keeps the planner off the session index, which makes it O(n²)).
const LEAF = `SELECT m.id FROM assistant_messages m WHERE m.session_id = ?
         AND NOT EXISTS (SELECT 1 FROM assistant_messages c WHERE c.parent_id = m.id AND +c.session_id = m.session_id)
       ORDER BY m.created_at DESC, m.rowid DESC LIMIT 1`;

// The registry row is written and compared first; messages and overlays a page (one transaction) at a time.
function sessionAdoption(
  driver: SqlDriver,
  sessionId: string,
  info: SessionInfo | null,
  { report }: AdoptionRun,
): SessionAdoption {
  let num: number | undefined;
  let inserted = 0;
  return {
    open: () =>
      routine(() => {
        if (info) {
          if (insertRegistryRow(driver, SQLITE_IMPORT, info)) report.registry.inserted++;
          else report.registry.skipped++;
          const stored = driver.get<SessionInfoRow>("SELECT * FROM agent_sessions WHERE id = ?", [info.id]);
          // Compared as read: a name sealed for its owner opened (store/session-names.ts).
          compareRegistryRow(report, info, stored && openedName(driver.keys, toSessionInfo(stored)));
        }
        inserted = report.messages.inserted;
      }),
    write: (items) =>
      routine(() => {
        // A message and the payloads it points at come out of the order together, so they share one batch.
        if (items.length > 0) num = writeItems(driver, SQLITE_IMPORT, sessionId, items, report);
      }),
    close: (order, overlays) =>
      routine(() => {
        if (num !== undefined && report.messages.inserted > inserted) {
          setLeaf(driver, num, driver.get<{ id: string }>(LEAF, [sessionId])?.id ?? null);
        }
        if (order.written.size > 0) verifyMessages(driver, sessionId, order, report);
        if (overlays.size > 0) verifyCompactions(driver, sessionId, overlays, report);
      }),
  };
}

// Each block or entry is inserted and read back (opened: a row of an owner with a key was sealed) in turn.
function rowsAdoption(driver: SqlDriver, { report, now }: AdoptionRun): RowsAdoption {
  return {
    write: (table, rows) =>
      routine(() => {
        const counts = table === "cf_agents_context_blocks" ? report.blocks : report.entries;
        for (const row of rows) {
          const put = insertRow(driver, row, now);
          if (put.inserted) counts.inserted++;
          else counts.skipped++;
          const stored =
            row.kind === "block"
              ? driver.get<BlockReadRow>(
                  `SELECT ${freeTextSql("content", "content")}, sealed, session_id, owner FROM agent_context_blocks
               WHERE key = ?`,
                  [row.key],
                )
              : driver.get<EntryRow>(
                  `SELECT ${freeTextSql("content", "content")}, sealed_chars, session_id, owner FROM agent_search_entries
               WHERE label = ? AND key = ?`,
                  [row.label, put.key],
                );
          if (!stored) assertReadBack(1, "block or entry row(s)", contextRowName(row));
          const read =
            row.kind === "block"
              ? readBlockRow(driver, row.key, stored as BlockReadRow)
              : entryOpener(driver, row.label)(put.key, stored as EntryRow).content;
          compareReadBack(report, row.content, read, contextRowName(row));
        }
      }),
    close: () => routine(() => {}),
  };
}

/** An adoption's writes on `driver` (sql/adopt/sqlite.ts runs them). */
export function sqliteAdoptionWrites(driver: SqlDriver): AdoptionWrites {
  return {
    session: (sessionId, info, run) => sessionAdoption(driver, sessionId, info, run),
    rows: (run) => rowsAdoption(driver, run),
  };
}
