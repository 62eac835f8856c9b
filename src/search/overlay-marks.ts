/**
 * The overlay marks of a page of hits, written once for every backend: a hit is marked (`compactedBy`) with the
 * compaction overlay that covers it (its summary stands for the hit in the history; the original is kept), the newest
 * of its session's newest SEARCH_OVERLAYS whose range holds it along the tree (its first message is an ancestor of
 * the hit, or the hit itself, and the hit one of its last message). The backend answers two things: a read of the
 * overlays of some sessions with their endpoints, newest first, and which overlay of a short list, newest first,
 * first holds each hit (SQLite climbs for each hit's newest overlay in one statement and for the other pairs in two
 * more, Postgres for all pairs in one). The order, the bounds and which hits need a look-up are decided here.
 * Synchronous for memory and SQLite, awaited for Postgres, the same steps (`markOverlays`, `markOverlaysAsync`).
 */
import type { SearchResult } from "../contract/search.js";
import { SEARCH_OVERLAYS } from "../store/limits.js";

/**
 * An overlay's first or last message: its seq and depth (undefined where the backend keeps no depths), with what
 * else the backend needs to climb from it.
 */
export interface OverlayEnd {
  seq: number;
  depth?: number | undefined;
}

/** An overlay as a backend reads it; an end is null when the message it names is gone (it covers nothing). */
export interface OverlayRow<E extends OverlayEnd> {
  id: string;
  /** Its row's sequence number: the order overlays are read in, newest first. */
  seq: number;
  /** Its session: a number on the SQL backends, the id on memory. */
  session: number | string;
  from: E | null;
  to: E | null;
}

/** An overlay whose ends are both there. */
export type Overlay<E extends OverlayEnd> = OverlayRow<E> & { from: E; to: E };

/** A hit to mark: its message, its session and whether the session has overlays (false: none, no look-up). */
export interface MarkHit {
  seq: number;
  /** Undefined where the backend keeps no depths (memory): then every overlay of its session may cover it. */
  depth?: number | undefined;
  session: number | string;
  overlaid?: boolean | undefined;
  result: SearchResult;
}

/** A hit and the overlays of its session whose depths span its own (where known), newest first: those that may cover it. */
export interface CoverCheck<E extends OverlayEnd> {
  hit: MarkHit;
  overlays: Overlay<E>[];
}

/** The sessions an overlay read asks for: each with the seq its overlays are older than (null: from the newest). */
export type OverlayReads = ReadonlyMap<number | string, number | null>;

/** What a backend answers for the overlay marks; `Step<T>` is how an answer comes back (T, or a promise of it). */
export interface OverlaySource<E extends OverlayEnd, Async extends boolean = false> {
  /**
   * How many overlays per session the first read takes; the rest, up to SEARCH_OVERLAYS, are read only for the hits
   * those leave unmarked. SQLite reads them all in one statement (no round trip); Postgres and memory the few first.
   */
  readonly firstRead: number;
  /** The newest `limit` overlays of each session of `sessions` older than its seq, each session's newest first. */
  overlays(sessions: OverlayReads, limit: number): Step<OverlayRow<E>[], Async>;
  /** For each check, the index of the first of its overlays whose range holds its hit, or undefined. */
  firstCovering(checks: readonly CoverCheck<E>[]): Step<(number | undefined)[], Async>;
}

/** An answer of a source: at once, or later. */
export type Step<T, Async extends boolean> = Async extends true ? Promise<T> : T;

/** Overlays checked first for every hit on a backend that reads them in two steps (Postgres, memory). */
export const FIRST_OVERLAYS = 8;

type Request<E extends OverlayEnd> =
  | { read: OverlayReads; limit: number }
  | { check: readonly CoverCheck<E>[] };
type Answer<E extends OverlayEnd> = OverlayRow<E>[] | (number | undefined)[];

/**
 * The steps of marking `hits`, written once for both kinds of engine: it yields each request and takes the answer.
 * Newest overlays first, the older ones only for the hits those leave unmarked: a hit is mostly covered by the newest
 * overlay over it (repeated compaction nests them), so reading and checking every overlay would be wasted.
 */
function* markSteps<E extends OverlayEnd>(
  hits: readonly MarkHit[],
  firstRead: number,
): Generator<Request<E>, void, Answer<E>> {
  // Sessions known to have no overlay (the page read says so) need no look-up.
  let unmarked = hits.filter((hit) => hit.overlaid !== false);
  // Each session's overlays older than the last one read (null: from the newest). By seq, not by offset: an overlay
  // deleted between two reads would otherwise shift an unread one into the first read's range.
  let sessions = new Map<number | string, number | null>(unmarked.map((hit) => [hit.session, null]));
  const first = Math.min(firstRead, SEARCH_OVERLAYS);
  for (const limit of first < SEARCH_OVERLAYS ? [first, SEARCH_OVERLAYS - first] : [first]) {
    if (sessions.size === 0) return;
    const batch = (yield { read: sessions, limit }) as OverlayRow<E>[];
    if (batch.length === 0) return;
    const bySession = new Map<number | string, Overlay<E>[]>();
    for (const overlay of batch) {
      if (overlay.from === null || overlay.to === null) continue;
      const own = bySession.get(overlay.session);
      if (own === undefined) bySession.set(overlay.session, [overlay as Overlay<E>]);
      else own.push(overlay as Overlay<E>);
    }
    // Only an overlay whose depths span the hit's can cover it: the climbs are for those.
    const checks: CoverCheck<E>[] = [];
    for (const hit of unmarked) {
      const { depth } = hit;
      const own = bySession.get(hit.session) ?? [];
      const overlays =
        depth === undefined
          ? own
          : own.filter(({ from, to }) => (from.depth ?? 0) <= depth && depth <= (to.depth ?? depth));
      if (overlays.length > 0) checks.push({ hit, overlays });
    }
    if (checks.length > 0) {
      const found = (yield { check: checks }) as (number | undefined)[];
      checks.forEach(({ hit, overlays }, i) => {
        const k = found[i];
        if (k !== undefined) hit.result.compactedBy = overlays[k]!.id;
      });
    }
    unmarked = unmarked.filter((hit) => hit.result.compactedBy === undefined);
    // Only a session whose first read was full can have older overlays; the batch is newest first.
    const read = new Map<number | string, { count: number; oldest: number }>();
    for (const { session, seq } of batch)
      read.set(session, { count: (read.get(session)?.count ?? 0) + 1, oldest: seq });
    sessions = new Map();
    for (const { session } of unmarked) {
      const got = read.get(session);
      if (got?.count === limit) sessions.set(session, got.oldest);
    }
  }
}

const ask = <E extends OverlayEnd, A extends boolean>(source: OverlaySource<E, A>, request: Request<E>) =>
  "read" in request ? source.overlays(request.read, request.limit) : source.firstCovering(request.check);

/** Marks each of `hits` with the overlay that covers it, if any, over a source that answers at once. */
export function markOverlays<E extends OverlayEnd>(source: OverlaySource<E>, hits: readonly MarkHit[]): void {
  const steps = markSteps<E>(hits, source.firstRead);
  for (let step = steps.next(); !step.done; step = steps.next(ask(source, step.value)));
}

/** markOverlays over a source whose answers come later. */
export async function markOverlaysAsync<E extends OverlayEnd>(
  source: OverlaySource<E, true>,
  hits: readonly MarkHit[],
): Promise<void> {
  const steps = markSteps<E>(hits, source.firstRead);
  for (let step = steps.next(); !step.done; step = steps.next(await ask(source, step.value)));
}
