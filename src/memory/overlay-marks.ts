/**
 * The overlay marks of a memory search's page: search/overlay-marks.ts over the rows themselves. Memory keeps no
 * depths, so a hit is checked against each overlay of its session, newest first, by a walk from the overlay's last
 * message up to its first, as far as the first that holds it.
 */
import type { SearchResult } from "../contract/search.js";
import {
  FIRST_OVERLAYS,
  markOverlays,
  type OverlayEnd,
  type OverlaySource,
} from "../search/overlay-marks.js";
import type { MemoryMessageRow as Row, MemorySessionData as SessionData } from "./data.js";

/** An overlay's end on memory: its row. */
interface RowEnd extends OverlayEnd {
  row: Row;
}

/** Marks the hits of a page with the overlays that cover them. */
export function markPage(
  page: readonly { item: { row: Row; sessionId: string; data: SessionData }; result: SearchResult }[],
): void {
  const sessions = new Map<number | string, SessionData>();
  const rows = new Map<number, Row>();
  for (const { item } of page) {
    sessions.set(item.sessionId, item.data);
    rows.set(item.row.seq, item.row);
  }
  const end = (data: SessionData, id: string): RowEnd | null => {
    const row = data.rows.get(id);
    return row === undefined ? null : { seq: row.seq, row };
  };
  const source: OverlaySource<RowEnd> = {
    // Reading costs no round trip but an object per overlay: the newest few first, as on Postgres. An overlay's
    // place in its session's list stands for its seq.
    firstRead: FIRST_OVERLAYS,
    overlays: (wanted, limit) =>
      [...wanted].flatMap(([session, before]) => {
        const data = sessions.get(session)!;
        const { compactions } = data;
        const overlays = [];
        for (let i = (before ?? compactions.length) - 1; i >= 0 && overlays.length < limit; i--) {
          const { id, fromMessageId, toMessageId } = compactions[i]!;
          overlays.push({ id, seq: i, session, from: end(data, fromMessageId), to: end(data, toMessageId) });
        }
        return overlays;
      }),
    firstCovering: (checks) =>
      checks.map(({ hit, overlays }) => {
        const row = rows.get(hit.seq);
        const k = overlays.findIndex(({ from, to }) => {
          for (let at: Row | null = to.row, inRange = false; at !== null; at = at.parent) {
            if (at === row) inRange = true;
            if (at === from.row) return inRange;
          }
          return false;
        });
        return k < 0 ? undefined : k;
      }),
  };
  markOverlays(
    source,
    page.map(({ item: { row, sessionId, data }, result }) => ({
      seq: row.seq,
      session: sessionId,
      // A session without overlays needs no look-up.
      overlaid: data.compactions.length > 0,
      result,
    })),
  );
}
