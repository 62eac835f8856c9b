/**
 * Reading the hits of a Postgres search: the page of messages for ranked seqs, and which of them lie on their
 * session's active path (O(log depth) skip-pointer climbs from each session's leaf).
 */

import type { SearchResult } from "../../contract/search.js";
import { storedMessageText } from "../../message/text.js";
import type { ScoreLookup } from "../../search/pipeline.js";
import type { Executor } from "../connection/client.js";
import type { Tables } from "../schema.js";
import { ancestorCte, isoSql, pathCte } from "../tree.js";

/** What a candidate brings from the candidate statement. */
export interface Candidate {
  seq: number;
  role: string;
  /** Read with the candidate only when a filter needs it; the page reads it for the hits. */
  createdAt?: string | undefined;
  depth: number;
  sessionId: string;
  sessionNum: number;
  leafSeq: number | null;
  /** The depth of the session's leaf: a message deeper than it cannot lie on its path. */
  leafDepth: number;
  /** The session has messages off its active path. */
  branched: boolean;
}

/** A hit with what the extras (context, overlays) need to find it again. */
export interface PageHit {
  candidate: Candidate;
  result: SearchResult;
  /** Whether the hit's session has compaction overlays; undefined: not read (extras.ts looks them up). */
  overlaid?: boolean;
}

// $1 seqs: whether each lies on its session's active path. The climbs that end on their own start are collected
// once and looked up (a hashed subplan): an EXISTS over the climbs per row was estimated at ~3.8M, so the server
// JIT-compiled it, and ran it as a rescan per row: 277 against 17 ms for 2,000 candidates of a session with 1,000
// forks (the JIT was most of it: 34 ms with jit off).
function onPathSql(t: Tables): string {
  return `WITH RECURSIVE
  hits AS (
    SELECT m.seq, m.depth, h.leaf_seq FROM unnest($1::bigint[]) s(seq)
    JOIN ${t.messages} m ON m.seq = s.seq JOIN ${t.heads} h ON h.num = m.session_num
  ),
  ${ancestorCte(t.messages, "anc", "SELECT seq, depth, leaf_seq FROM hits WHERE leaf_seq IS NOT NULL")},
  found AS (SELECT k FROM anc WHERE depth = target AND seq = k)
  SELECT hits.seq::float8 AS seq, hits.seq IN (SELECT k FROM found) AS on_path FROM hits`;
}

// $1 leaf seqs: every message on their paths (each path walked once, depth rows).
const pathsSql = (t: Tables) =>
  `WITH RECURSIVE ${pathCte(t.messages, "ANY($1::bigint[])")} SELECT seq::float8 AS seq FROM path`;

/** What onPathOf needs of a message: where it lies, and its session's leaf. */
export type PathCandidate = Pick<Candidate, "seq" | "depth" | "leafSeq" | "leafDepth" | "branched">;

/**
 * Whether each candidate lies on its session's active path (a statement for the climbs and one for the paths read
 * whole; none where no candidate needs either).
 */
export async function onPathOf(
  executor: Executor,
  t: Tables,
  candidates: readonly PathCandidate[],
): Promise<Map<number, boolean>> {
  const onPath = new Map<number, boolean>();
  // Only a message no deeper than its session's leaf needs a look: the turns of a long abandoned branch mostly lie
  // below it, and climbing for thousands of them cost a search ~0.1 s at 100,000 messages.
  const byLeaf = new Map<number, { depth: number; seqs: number[] }>();
  for (const c of candidates) {
    if (c.leafSeq === null) onPath.set(c.seq, false);
    else if (!c.branched) onPath.set(c.seq, true);
    else if (c.depth > c.leafDepth) onPath.set(c.seq, false);
    else {
      const leaf = byLeaf.get(c.leafSeq);
      if (leaf === undefined) byLeaf.set(c.leafSeq, { depth: c.leafDepth, seqs: [c.seq] });
      else leaf.seqs.push(c.seq);
    }
  }
  // A climb costs ~log2(depth) rows, the whole path depth rows: a path is read once where its session's candidates
  // are many for it (as SQLite's onPaths does): an active-branch search of a 300-message path with 1,000 forks at
  // one message (2,000 candidates off the path) took 34 ms with a climb each, 16 ms so.
  const climbs: number[] = [];
  const walks: number[] = [];
  for (const [leaf, { depth, seqs }] of byLeaf) {
    if (seqs.length * Math.log2(depth + 2) > depth + 1) walks.push(leaf);
    else climbs.push(...seqs);
  }
  if (walks.length > 0) {
    const path = new Set(
      (await executor.query<{ seq: number }>(pathsSql(t), [walks])).map((r) => Number(r.seq)),
    );
    for (const leaf of walks) for (const seq of byLeaf.get(leaf)?.seqs ?? []) onPath.set(seq, path.has(seq));
  }
  if (climbs.length === 0) return onPath;
  const rows = await executor.query<{ seq: number; on_path: boolean }>(onPathSql(t), [climbs]);
  for (const row of rows) onPath.set(Number(row.seq), row.on_path);
  return onPath;
}

/** The results for `candidates` in their order, each with its active-path flag and, when given, its score. */
export async function readPage(
  executor: Executor,
  t: Tables,
  candidates: readonly Candidate[],
  scores?: ScoreLookup,
): Promise<PageHit[]> {
  if (candidates.length === 0) return [];
  // Prepared: the plan does not depend on the seqs. Whether a hit's session has overlays comes along (an index
  // probe per hit), so a search of sessions without any needs no statement to mark its hits (extras.ts).
  const rows = await executor.query<PageRow>(
    `SELECT m.seq::float8 AS seq, m.id, m.content, ${isoSql("m.created_at")} AS created_at,
       EXISTS (SELECT 1 FROM ${t.compactions} c WHERE c.session_num = m.session_num) AS overlaid
     FROM unnest($1::bigint[]) s(seq) JOIN ${t.messages} m ON m.seq = s.seq`,
    [candidates.map((c) => c.seq)],
    true,
  );
  const bySeq = new Map(rows.map((row) => [Number(row.seq), row]));
  const onPath = await onPathOf(executor, t, candidates);
  const hits: PageHit[] = [];
  for (const candidate of candidates) {
    const row = bySeq.get(candidate.seq);
    if (row === undefined) continue;
    const result: SearchResult = {
      id: row.id,
      role: candidate.role,
      content: storedMessageText(row.content),
      createdAt: row.created_at,
      sessionId: candidate.sessionId,
      onActivePath: onPath.get(candidate.seq) === true,
    };
    const score = scores?.get(candidate.seq);
    if (score !== undefined) result.score = score;
    hits.push({ candidate, result, overlaid: row.overlaid });
  }
  return hits;
}

interface PageRow {
  seq: number;
  id: string;
  content: string;
  created_at: string;
  overlaid: boolean;
}
