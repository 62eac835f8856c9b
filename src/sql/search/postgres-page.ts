/**
 * Reading the hits of a Postgres search: the page of messages for ranked seqs, and which of them lie on their
 * session's active path (O(log depth) skip-pointer climbs from each session's leaf).
 */

import type { SearchResult } from "../../contract/search.js";
import { storedMessageAuthor } from "../../message/author.js";
import { storedMessageText } from "../../message/text.js";
import { hitResult } from "../../search/hits.js";
import { hasOtherBranches, onPathByHead, planPathChecks } from "../../search/on-path.js";
import type { ScoreLookup } from "../../search/pipeline.js";
import { isSealed } from "../../store/crypto/seal.js";
import type { Executor } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import { ancestorCte, isoSql, pathCte } from "../engines/postgres/tree.js";
import { openContents } from "../sealing/postgres-stored-form.js";

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
  /** Whether the session has compaction overlays, when the candidate statement read it (one session on Citus). */
  overlaid?: boolean;
}

/** The columns a candidate is read with, as the candidate and strict-search statements name them. */
export interface CandidateColumns {
  seq: number;
  role: string;
  created_at: string | null;
  depth: number;
  session_id: string;
  session_num: number;
  leaf_seq: number | null;
  leaf_depth: number;
  message_count: number;
}

/** A candidate of its row (numbers as the driver may return them: bigint columns as strings). */
export function candidateOf(row: CandidateColumns): Candidate {
  return {
    seq: Number(row.seq),
    role: row.role,
    createdAt: row.created_at ?? undefined,
    depth: Number(row.depth),
    sessionId: row.session_id,
    sessionNum: Number(row.session_num),
    leafSeq: row.leaf_seq === null ? null : Number(row.leaf_seq),
    leafDepth: Number(row.leaf_depth),
    branched: hasOtherBranches(row.leaf_seq, Number(row.leaf_depth), Number(row.message_count)),
  };
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
// In the Citus layout `$2` is the session of every seq (bySession runs a statement per session).
function onPathSql(t: Tables): string {
  const own = t.layout.scope("$2::text");
  return `WITH RECURSIVE
  hits AS (
    SELECT m.seq, m.depth, h.leaf_seq FROM unnest($1::bigint[]) s(seq)
    JOIN ${t.messages} m ON m.seq = s.seq${own("m")} JOIN ${t.heads} h ON h.num = m.session_num${own("h")}
  ),
  ${ancestorCte(t.messages, "anc", "SELECT seq, depth, leaf_seq FROM hits WHERE leaf_seq IS NOT NULL", false, own)},
  found AS (SELECT k FROM anc WHERE depth = target AND seq = k)
  SELECT hits.seq::float8 AS seq, hits.seq IN (SELECT k FROM found) AS on_path FROM hits`;
}

// $1 leaf seqs: every message on their paths (each path walked once, depth rows).
const pathsSql = (t: Tables) =>
  `WITH RECURSIVE ${pathCte(t.messages, "ANY($1::bigint[])", t.layout.scope("$2::text"))} SELECT seq::float8 AS seq FROM path`;

/**
 * Runs `sql` on the seqs of `items`: once on a single node; in the Citus layout once per session (`$2`), so each
 * statement is routed to the shard that holds it (at most one a hit's session: bounded by the page).
 */
async function bySession<R>(
  executor: Executor,
  t: Tables,
  sql: string,
  items: readonly { seq: number; sessionId: string }[],
  prepare = false,
): Promise<R[]> {
  if (!t.layout.readsPerShard) return executor.query<R>(sql, [items.map((i) => i.seq)], prepare);
  const groups = new Map<string, number[]>();
  for (const { seq, sessionId } of items) groups.set(sessionId, [...(groups.get(sessionId) ?? []), seq]);
  const rows: R[] = [];
  for (const [sessionId, seqs] of groups)
    rows.push(...(await executor.query<R>(sql, [seqs, sessionId], prepare)));
  return rows;
}

/** What onPathOf needs of a message: where it lies, and its session's leaf. */
export type PathCandidate = Pick<
  Candidate,
  "seq" | "depth" | "leafSeq" | "leafDepth" | "branched" | "sessionId"
>;

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
  // Only a message no deeper than its session's leaf needs a look (search/on-path.ts): the turns of a long abandoned
  // branch mostly lie below it, and climbing for thousands of them cost a search ~0.1 s at 100,000 messages.
  const checks: { seq: number; leaf: number; leafDepth: number; sessionId: string }[] = [];
  for (const c of candidates) {
    const known = onPathByHead(c.leafSeq, c.leafDepth, c.branched, c.depth);
    if (known !== undefined) onPath.set(c.seq, known);
    else if (c.leafSeq !== null)
      checks.push({ seq: c.seq, leaf: c.leafSeq, leafDepth: c.leafDepth, sessionId: c.sessionId });
  }
  // A path is read once where its session's candidates are many for it, as SQLite's onPaths does: an active-branch
  // search of a 300-message path with 1,000 forks at one message (2,000 candidates off the path) took 34 ms with a
  // climb each, 16 ms so.
  const { walks, climbs } = planPathChecks(checks);
  if (walks.length > 0) {
    const leaves = walks.map(({ leaf, checks: [first] }) => ({ seq: leaf, sessionId: first!.sessionId }));
    const path = new Set(
      (await bySession<{ seq: number }>(executor, t, pathsSql(t), leaves)).map((r) => Number(r.seq)),
    );
    for (const walk of walks) for (const { seq } of walk.checks) onPath.set(seq, path.has(seq));
  }
  if (climbs.length === 0) return onPath;
  const rows = await bySession<{ seq: number; on_path: boolean }>(executor, t, onPathSql(t), climbs);
  for (const row of rows) onPath.set(Number(row.seq), row.on_path);
  return onPath;
}

/**
 * Opens the sealed contents among `rows` (an encrypted owner's hits, found through its blind tokens), each with
 * its session's key (`DECRYPT_FAILED` without it, never an empty hit); rows in clear are left as they are, and a
 * page without sealed rows costs nothing.
 */
export async function openHitContents<R extends { id: string; content: string | null }>(
  executor: Executor,
  t: Tables,
  rows: readonly R[],
  sessionOf: (row: R) => string,
): Promise<void> {
  const bySession = new Map<string, R[]>();
  for (const row of rows) {
    if (row.content === null || !isSealed(row.content)) continue;
    const sessionId = sessionOf(row);
    bySession.set(sessionId, [...(bySession.get(sessionId) ?? []), row]);
  }
  for (const [sessionId, sealed] of bySession) {
    const ids = sealed.map((row) => row.id);
    const opened = await openContents(
      executor.query,
      t,
      sessionId,
      sealed.map((row) => row.content!),
      ids,
    );
    sealed.forEach((row, i) => {
      row.content = opened[i]!;
    });
  }
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
  // probe per hit), so a search of sessions without any needs no statement to mark its hits (extras.ts). When the
  // candidates know it already (one session on Citus), the page is read from the messages table alone, which Citus
  // plans on its fast path: a join or sub-query costs the coordinator a full plan on every call.
  const own = t.layout.scope("$2::text");
  const known = t.layout.readsPerShard && candidates.every((c) => c.overlaid !== undefined);
  const rows = await bySession<PageRow>(
    executor,
    t,
    known
      ? `SELECT m.seq::float8 AS seq, m.id, m.content, ${isoSql("m.created_at")} AS created_at
     FROM ${t.messages} m WHERE m.seq = ANY($1::bigint[])${own("m")}`
      : `SELECT m.seq::float8 AS seq, m.id, m.content, ${isoSql("m.created_at")} AS created_at,
       EXISTS (SELECT 1 FROM ${t.compactions} c WHERE c.session_num = m.session_num${own("c")}) AS overlaid
     FROM unnest($1::bigint[]) s(seq) JOIN ${t.messages} m ON m.seq = s.seq${own("m")}`,
    candidates,
    true,
  );
  const sessions = new Map(candidates.map((c) => [c.seq, c.sessionId]));
  await openHitContents(executor, t, rows, (row) => sessions.get(Number(row.seq))!);
  const bySeq = new Map(rows.map((row) => [Number(row.seq), row]));
  const onPath = await onPathOf(executor, t, candidates);
  const hits: PageHit[] = [];
  for (const candidate of candidates) {
    const row = bySeq.get(candidate.seq);
    if (row === undefined) continue;
    const result = hitResult(
      {
        id: row.id,
        role: candidate.role,
        content: storedMessageText(row.content),
        createdAt: row.created_at,
        sessionId: candidate.sessionId,
        onActivePath: onPath.get(candidate.seq) === true,
      },
      scores?.get(candidate.seq),
    );
    const overlaid = row.overlaid ?? candidate.overlaid;
    hits.push({ candidate, result, ...(overlaid === undefined ? {} : { overlaid }) });
  }
  return hits;
}

/**
 * The authors of `candidates` (message/author.ts) from their stored JSON, sealed content opened with its owner's
 * key as the page's is (search/authors.ts): one statement (one per session on Citus); a row in clear without the key
 * "author" brings no JSON.
 */
export async function readAuthors(
  executor: Executor,
  t: Tables,
  candidates: readonly Candidate[],
): Promise<Map<number, string>> {
  const authors = new Map<number, string>();
  if (candidates.length === 0) return authors;
  const own = t.layout.scope("$2::text");
  const rows = await bySession<{ seq: number; id: string; content: string | null }>(
    executor,
    t,
    `SELECT m.seq::float8 AS seq, m.id, CASE WHEN left(m.content, 1) = '{' AND strpos(m.content, '"author"') = 0
       THEN NULL ELSE m.content END AS content
     FROM unnest($1::bigint[]) s(seq) JOIN ${t.messages} m ON m.seq = s.seq${own("m")}`,
    candidates,
    true,
  );
  const sessions = new Map(candidates.map((c) => [c.seq, c.sessionId]));
  await openHitContents(executor, t, rows, (row) => sessions.get(Number(row.seq))!);
  for (const row of rows) {
    const author = storedMessageAuthor(row.content);
    if (author !== undefined) authors.set(Number(row.seq), author);
  }
  return authors;
}

interface PageRow {
  seq: number;
  id: string;
  content: string;
  created_at: string;
  /** Absent when the candidates brought it. */
  overlaid?: boolean;
}
