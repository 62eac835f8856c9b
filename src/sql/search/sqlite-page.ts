import type { SearchResult } from "../../contract/search.js";
import { storedMessageText } from "../../message/text.js";
import { hitResult } from "../../search/hits.js";
import { hasOtherBranches, onPathByHead } from "../../search/on-path.js";
import { acceptsHit, hasFilters, type SearchPlan } from "../../search/options.js";
import type { ScoreLookup } from "../../search/pipeline.js";
import { contentSql, resolveContent } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { onPaths } from "../engines/sqlite/tree.js";

/** A session's head as the hits need it: its id, leaf and whether it has other branches (count vs depth). */
export interface HitHead {
  session_id: string;
  session_num: number;
  leaf_seq: number | null;
  leaf_depth: number | null;
  message_count: number;
  /** Whether the session has compaction overlays; undefined: not read (look them up). */
  has_overlays?: boolean;
}

// A hit as the page statements return it, one array per row (see SqlDriver.tuples): the message's own columns,
// then, in a store-wide search, its session's head.
type MessageColumns = [
  seq: number,
  id: string,
  role: string,
  content: unknown,
  created_at: string,
  depth: number,
];
type HeadColumns = [
  session_id: string,
  session_num: number,
  leaf_seq: number | null,
  leaf_depth: number | null,
  message_count: number,
];
type HitRow = MessageColumns | [...MessageColumns, ...HeadColumns];

// One statement reads a whole page of hits, the seqs given as a JSON array: a statement per hit cost ~20 µs each
// (20 hits: half of an everyday search), one for the page ~10 µs per hit. The leaf's depth comes along, so a
// session without branches needs no leaf read at all. The ranked order is restored in JavaScript: an `ORDER BY
// j.key` made SQLite copy every row, the message JSON included, through a temporary B-tree (one word, 1,000
// messages: ~13 % of a search's CPU profile went to reading the page).
const HITS_SQL = `SELECT m.seq, m.id, m.role, ${contentSql("m")} AS content, m.created_at, m.depth, h.session_id,
    h.num AS session_num, h.leaf_seq, l.depth AS leaf_depth, h.message_count
  FROM json_each(?) j JOIN agent_messages m ON m.seq = j.value JOIN agent_session_heads h ON h.num = m.session_num
    LEFT JOIN agent_messages l ON l.seq = h.leaf_seq`;

// The same page inside one session whose head the caller already read: only the message's own columns. Each
// column of a row object costs better-sqlite3 a property (~0.2 µs): the five head columns of 20 hits were ~45 of
// the page's ~105 µs CPU (10,000-message session). Both pages come back as arrays (SqlDriver.tuples), no row
// objects at all: with the cold caches a search meets, 10 hits took 40 µs as arrays against 58 µs as objects.
const SESSION_HITS_SQL = `SELECT m.seq, m.id, m.role, ${contentSql("m")} AS content, m.created_at, m.depth
  FROM json_each(?) j JOIN agent_messages m ON m.seq = j.value`;

export type { ScoreLookup } from "../../search/pipeline.js";

/** How a page of hits is read: the branch scope, the session's head when scoped, the filters and scores. */
export interface HitOptions {
  activeOnly: boolean;
  /** Every seq is a message of this session (a scoped search), whose head need not be read per hit. */
  head?: HitHead | undefined;
  /** The role, time and session filters: false leaves a hit out. */
  accept?: ((role: string, createdAt: string, sessionId: string) => boolean) | undefined;
  /** Relevance of each seq, reported as the hit's score. */
  scores?: ScoreLookup | undefined;
}

/** The hit options of a search plan: its branch scope and filters (none when it has none, to skip the calls). */
export function hitOptionsOf(plan: SearchPlan, head: HitHead | undefined, scores?: ScoreLookup): HitOptions {
  const filtered = hasFilters(plan) || plan.sessionIds !== undefined;
  return {
    activeOnly: plan.activeOnly,
    head,
    accept: filtered
      ? (role, createdAt, sessionId) => acceptsHit(plan, role, createdAt, sessionId)
      : undefined,
    scores,
  };
}

/** A hit with what the extras (context, overlays) need to find it again. */
export interface Hit {
  seq: number;
  /** Its depth in the tree: which overlays' ranges can hold it (search/overlay-marks.ts). */
  depth: number;
  head: HitHead;
  result: SearchResult;
}

/**
 * The search results for ranked seqs, best first, at most `limit`: read a page at a time (a page is what the
 * limit still needs, so nothing is read that is not returned unless a filter skips it), each with its
 * active-path flag, skipping hits off the active path when `activeOnly` and hits the filters refuse.
 */
export function readHits(
  driver: SqlDriver,
  seqs: readonly number[],
  limit: number,
  { activeOnly, head, accept, scores }: HitOptions,
): Hit[] {
  const hits: Hit[] = [];
  let next = 0;
  while (hits.length < limit && next < seqs.length) {
    // Skipped hits (other branches, filters) make later pages grow, so a long run of them costs few statements.
    const want = Math.max(limit - hits.length, Math.min(next, 1000));
    const page = seqs.slice(next, next + want);
    next += page.length;
    const rows = driver.tuples<HitRow>(head ? SESSION_HITS_SQL : HITS_SQL, [JSON.stringify(page)]);
    const bySeq = new Map(rows.map((row) => [row[0], row]));
    // The page's active-path flags in one statement: a statement per hit cost thousands of them where most ranked
    // hits lie on other branches (a session with 1,000 forks).
    const onPath = onActivePaths(driver, bySeq, (row) => head ?? headOf(row));
    for (const seq of page) {
      const hit = bySeq.get(seq);
      // A ranked seq without a message row (none in a consistent store) is skipped, as the join always did.
      if (hit === undefined) continue;
      if (hits.length >= limit) break;
      const [, id, role, content, createdAt, depth] = hit;
      const hitHead = head ?? headOf(hit);
      if (accept && !accept(role, createdAt, hitHead.session_id)) continue;
      const onActivePath = onPath.has(seq);
      if (activeOnly && !onActivePath) continue;
      const result = hitResult(
        {
          id,
          role,
          content: storedMessageText(resolveContent(driver, content, hitHead.session_id, id)),
          createdAt,
          sessionId: hitHead.session_id,
          onActivePath,
        },
        scores?.get(seq),
      );
      hits.push({ seq, depth, head: hitHead, result });
    }
  }
  return hits;
}

// The head columns a store-wide page brings with each hit.
function headOf(hit: HitRow): HitHead {
  const [, , , , , , session_id, session_num, leaf_seq, leaf_depth, message_count] = hit as [
    ...MessageColumns,
    ...HeadColumns,
  ];
  return { session_id, session_num, leaf_seq, leaf_depth, message_count };
}

/**
 * Whether reading the page may leave ranked hits out (a filter refuses one, or a hit is off the active path of a
 * session with other branches), so that more than `limit` ranked seqs may be needed. `head`: the scope's session.
 */
export function pageMaySkip(plan: SearchPlan, head: HitHead | undefined): boolean {
  return (
    hasFilters(plan) ||
    plan.sessionIds !== undefined ||
    (plan.activeOnly && (head === undefined || headBranched(head)))
  );
}

/** Whether a session has other branches, by search/on-path.ts's rule. */
export function headBranched(head: HitHead): boolean {
  return hasOtherBranches(head.leaf_seq, head.leaf_depth, head.message_count);
}

/**
 * Which of the messages `rows` (seq → a row) lie on their session's active path, each row's session head by
 * `headFor` (none: not on a path the search sees): those the head tells (search/on-path.ts), the others checked in
 * one statement (tree.ts's onPaths).
 */
export function onActivePaths<R>(
  driver: SqlDriver,
  rows: Iterable<readonly [number, R]>,
  headFor: (row: R) => HitHead | undefined,
): Set<number> {
  const on = new Set<number>();
  const checks: [number, number][] = [];
  const leafDepths = new Map<number, number>();
  for (const [seq, row] of rows) {
    const head = headFor(row);
    if (head === undefined) continue;
    const known = onPathByHead(head.leaf_seq, head.leaf_depth, headBranched(head));
    if (known === true) on.add(seq);
    if (known !== undefined || head.leaf_seq === null || head.leaf_depth === null) continue;
    checks.push([seq, head.leaf_seq]);
    leafDepths.set(head.leaf_seq, head.leaf_depth);
  }
  // A page or candidates of sessions without other branches need no statement (most searches).
  if (checks.length > 0) for (const seq of onPaths(driver, checks, leafDepths)) on.add(seq);
  return on;
}
