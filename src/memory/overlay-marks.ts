/**
 * The overlay marks of a memory search's page: search/overlay-marks.ts over the rows themselves, a session's
 * overlays read at once and each hit checked against them by walks up its parents.
 */
import type { SearchResult } from "../contract/search.js";
import { markOverlays, type OverlayEnd, type OverlaySource } from "../search/overlay-marks.js";
import { SEARCH_OVERLAYS } from "../store/limits.js";
import type { MemoryMessageRow as Row, MemorySessionData as SessionData } from "./data.js";

/** An overlay's end on memory: its row, with its seq and depth. */
interface RowEnd extends OverlayEnd {
  row: Row;
}

/** Marks the hits of a page with the overlays that cover them, the rows' depths counted once for the page. */
export function markPage(
  page: readonly { item: { row: Row; sessionId: string; data: SessionData }; result: SearchResult }[],
): void {
  const depths = new Map<Row, number>();
  const depthOf = (row: Row): number => {
    const above: Row[] = [];
    let at: Row | null = row;
    while (at !== null && !depths.has(at)) {
      above.push(at);
      at = at.parent;
    }
    let depth = at === null ? -1 : depths.get(at)!;
    for (let i = above.length - 1; i >= 0; i--) depths.set(above[i]!, ++depth);
    return depth;
  };
  const up = (row: Row, steps: number): Row | null => {
    let at: Row | null = row;
    for (let i = 0; i < steps && at !== null; i++) at = at.parent;
    return at;
  };
  const sessions = new Map<number | string, SessionData>();
  const rows = new Map<number, Row>();
  for (const { item } of page) {
    sessions.set(item.sessionId, item.data);
    rows.set(item.row.seq, item.row);
  }
  const end = (data: SessionData, id: string): RowEnd | null => {
    const row = data.rows.get(id);
    return row === undefined ? null : { seq: row.seq, depth: depthOf(row), row };
  };
  const source: OverlaySource<RowEnd> = {
    firstRead: SEARCH_OVERLAYS,
    // An overlay's place in its session's list stands for its seq.
    overlays: (wanted, limit) =>
      [...wanted].flatMap(([session, before]) => {
        const data = sessions.get(session)!;
        const newest = before ?? data.compactions.length;
        return data.compactions
          .slice(Math.max(0, newest - limit), newest)
          .map((c, i) => ({
            id: c.id,
            seq: Math.max(0, newest - limit) + i,
            session,
            from: end(data, c.fromMessageId),
            to: end(data, c.toMessageId),
          }))
          .reverse();
      }),
    firstCovering: (checks) =>
      checks.map(({ hit, overlays }) => {
        const row = rows.get(hit.seq)!;
        const k = overlays.findIndex(
          ({ from, to }) =>
            up(row, hit.depth - from.depth) === from.row && up(to.row, to.depth - hit.depth) === row,
        );
        return k < 0 ? undefined : k;
      }),
  };
  markOverlays(
    source,
    page.map(({ item: { row, sessionId, data }, result }) => {
      // A session without overlays needs no depth.
      const overlaid = data.compactions.length > 0;
      return { seq: row.seq, depth: overlaid ? depthOf(row) : 0, session: sessionId, overlaid, result };
    }),
  );
}
