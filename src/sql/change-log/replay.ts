/**
 * What both engines' change logs share (sqlite.ts, postgres.ts): the columns a page reads, the prune's statement and
 * the replay of the rows after a cursor, written once; each engine reads its own pages (a synchronous driver or an
 * awaited connection) and its oldest row.
 */
import type { ChangeEvent } from "../../contract/feed.js";
import type { SessionMessage } from "../../contract/message.js";
import {
  type ChangeRow,
  type OpenSummary,
  PAGE_ROWS,
  PRUNE_BATCH,
  prunedPastCursor,
} from "../../store/feed/change-rows.js";
import { readChangeRow } from "../../store/feed/rows.js";

/** The columns of a change row as a page reads them. */
export const COLUMNS = "seq, origin, session_id, kind, ids, parent_id, data";

/** A page of the log `table` after the cursor `$1`/`?` (`param`), in cursor order. */
export function pageSql(table: string, param: string): string {
  return `SELECT ${COLUMNS} FROM ${table} WHERE seq > ${param} ORDER BY seq LIMIT ${PAGE_ROWS}`;
}

/** The oldest rows of the log `table` up to the seq `param` deleted, a bounded batch at a time. */
export function pruneSql(table: string, param: string): string {
  return `DELETE FROM ${table} WHERE seq IN
        (SELECT seq FROM ${table} WHERE seq <= ${param} ORDER BY seq LIMIT ${PRUNE_BATCH})`;
}

/**
 * The events after `after`, a reset first when pruning cut the log past it (pruning keeps the newest rows, so the
 * log is only ever cut at its old end: a gap there means lost events); `origin` marks this store's own rows local.
 */
export async function* replayRows(
  oldest: number | null | undefined,
  after: number,
  page: (after: number) => ChangeRow[] | Promise<ChangeRow[]>,
  origin: string,
  read: (sessionId: string, id: string) => Promise<SessionMessage | null>,
  open: OpenSummary,
): AsyncIterable<ChangeEvent> {
  const gap = prunedPastCursor(oldest, after);
  if (gap) yield gap;
  let cursor = after;
  for (let rows = await page(cursor); rows.length > 0; rows = await page(cursor)) {
    for (const row of rows) {
      cursor = Number(row.seq);
      const event = await readChangeRow(row, row.origin === origin ? "local" : "remote", read, open);
      if (event) yield event;
    }
  }
}
