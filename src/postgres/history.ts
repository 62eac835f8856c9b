/**
 * Path reads. A read without applicable overlays is one round trip: the statement resolves the leaf, finds the
 * overlays whose endpoints both lie on the path (checked with one skip-pointer climb through their depths) and,
 * only when none applies, walks the path. With overlays it returns the candidates instead; `chooseOverlays` picks
 * the winners and a second statement reads just the uncompacted segments, so a compacted range is never walked.
 */

import type { SessionMessage } from "../contract/message.js";
import type { HistoryRowStat } from "../contract/provider.js";
import { parseMessage } from "../message/json.js";
import { overlayMessage } from "../message/overlay.js";
import type { Executor } from "../sql/engines/postgres/client.js";
import { statement, type Tables } from "../sql/engines/postgres/tables.js";
import {
  isoSql,
  leafCte,
  onPathOverlaysCtes,
  overlayEndpoints,
  overlayOnPath,
  stepTo,
} from "../sql/engines/postgres/tree.js";
import { openContents } from "../sql/sealing/postgres-stored-form.js";
import { chooseAndOpen } from "../sql/sealing/postgres-summaries.js";
import type { OverlaySpan } from "../store/overlays.js";

// $3 byte budget (NULL = whole path), $4 minimum number of recent rows.
const planSql = statement((t) => {
  const own = t.layout.scope("$1::text");
  return `WITH RECURSIVE ${leafCte(t)},
  win(seq, parent_seq, depth, acc, n) AS (
    SELECT seq, parent_seq, depth, bytes::bigint, 1 FROM leaf WHERE $3::float8 IS NOT NULL
    UNION ALL
    SELECT m.seq, m.parent_seq, m.depth, w.acc + m.bytes, w.n + 1 FROM win w ${stepTo(t.messages, "m", "w.parent_seq", own)}
    WHERE w.n < $4::integer OR w.acc + m.bytes <= $3::float8
  ),
  top AS (SELECT COALESCE((SELECT min(depth) FROM win), 0) AS depth),
  cand AS (
    SELECT c.seq AS k, c.id, c.summary, c.summary_json, c.from_message_id, c.to_message_id, c.details,
      ${isoSql("c.created_at")} AS created_at, f.seq AS from_seq, f.parent_seq AS from_parent,
      f.depth AS from_depth, t.seq AS to_seq, t.depth AS to_depth
    FROM leaf JOIN ${t.compactions} c ON c.session_num = leaf.session_num${own("c")}
    ${overlayEndpoints(t.messages, own)}
    WHERE f.depth >= (SELECT depth FROM top) AND t.depth <= leaf.depth AND f.depth <= t.depth
  ),
  ${onPathOverlaysCtes(t.messages, "(SELECT seq FROM leaf)", own)},
  onpath AS (SELECT cand.* FROM cand WHERE ${overlayOnPath("cand")}),
  walk(seq, parent_seq, depth, content) AS (
    SELECT seq, parent_seq, depth, content FROM leaf WHERE NOT EXISTS (SELECT 1 FROM onpath)
    UNION ALL
    SELECT m.seq, m.parent_seq, m.depth, m.content FROM walk w ${stepTo(t.messages, "m", "w.parent_seq", own)}
    WHERE m.depth >= (SELECT depth FROM top)
  )
  SELECT 'l' AS kind, depth, seq AS a, cum_bytes AS b, (SELECT depth FROM top) AS c, NULL AS body FROM leaf
  UNION ALL SELECT 'm', depth, NULL, NULL, NULL, content FROM walk
  UNION ALL SELECT 'o', from_depth, k, from_parent, to_depth,
    json_build_object('id', id, 'summary', summary, 'summary_json', summary_json, 'from_message_id',
      from_message_id, 'to_message_id', to_message_id, 'details', details, 'created_at', created_at)::text
  FROM onpath`;
});

// Reads path segments (`$1` bottom seqs, `$2` top depths; `$3` the session in the Citus layout) with one recursive
// walk touching only returned rows.
const segmentsSql = statement((t) => {
  const own = t.layout.scope("$3::text");
  return `WITH RECURSIVE seg(top, seq, parent_seq, depth, content) AS (
    SELECT s.top, m.seq, m.parent_seq, m.depth, m.content
    FROM unnest($1::bigint[], $2::integer[]) AS s(bottom, top) JOIN ${t.messages} m ON m.seq = s.bottom${own("m")}
    WHERE m.depth >= s.top
    UNION ALL
    SELECT g.top, m.seq, m.parent_seq, m.depth, m.content FROM seg g ${stepTo(t.messages, "m", "g.parent_seq", own)}
    WHERE m.depth >= g.top
  ) SELECT depth, content FROM seg`;
});

const depthSql = statement((t) => `WITH ${leafCte(t)} SELECT depth FROM leaf`);

const statsSql = statement((t) => {
  const own = t.layout.scope("$1::text");
  return `WITH RECURSIVE ${leafCte(t)},
  path(seq, parent_seq, id, role, bytes, tokens, depth) AS (
    SELECT m.seq, m.parent_seq, m.id, m.role, m.bytes, m.tokens, m.depth FROM leaf JOIN ${t.messages} m
      ON m.seq = leaf.seq${own("m")}
    UNION ALL
    SELECT m.seq, m.parent_seq, m.id, m.role, m.bytes, m.tokens, m.depth FROM path p ${stepTo(t.messages, "m", "p.parent_seq", own)}
  ) SELECT id, role, bytes, tokens, depth FROM path`;
});

interface PlanRow {
  kind: "l" | "m" | "o";
  depth: number;
  a: string | number | null;
  b: string | number | null;
  c: string | number | null;
  body: string | null;
}

interface Candidate extends OverlaySpan {
  /** The overlay's row as JSON (its summary decoded or opened once chosen). */
  body: string;
  fromParent: number | null;
}

/** A path read: the messages (overlays applied), the leaf's depth and the window's top depth. */
export interface PathRead {
  messages: SessionMessage[];
  leafDepth: number;
  top: number;
  totalBytes: number;
}

function place(rows: { depth: number; body: string | null }[], byDepth: Map<number, string>): void {
  for (const row of rows) if (row.body !== null) byDepth.set(Number(row.depth), row.body);
}

function pushRange(out: SessionMessage[], byDepth: Map<number, string>, from: number, to: number): void {
  for (let depth = from; depth <= to; depth++) {
    const body = byDepth.get(depth);
    const message = body === undefined ? null : parseMessage(body);
    if (message) out.push(message);
  }
}

// The bodies read, sealed ones (an encrypted owner's) opened in place; no statement when none is sealed.
async function openPlaced(executor: Executor, t: Tables, sessionId: string, byDepth: Map<number, string>) {
  const depths = [...byDepth.keys()];
  const opened = await openContents(
    executor.query,
    t,
    sessionId,
    depths.map((depth) => byDepth.get(depth)!),
  );
  for (const [i, depth] of depths.entries()) byDepth.set(depth, opened[i]!);
}

/**
 * Reads the path ending at `leafId` (or the latest leaf) with overlays applied exactly as the reference does;
 * with `maxBytes`, only the newest suffix that fits (at least `minRecent` rows). Null when the leaf is unknown.
 */
export async function readPath(
  executor: Executor,
  t: Tables,
  sessionId: string,
  leafId: string | null | undefined,
  maxBytes: number | null = null,
  minRecent = 1,
): Promise<PathRead | null> {
  if (leafId !== undefined && leafId !== null && typeof leafId !== "string") return null;
  const params = [sessionId, leafId ?? null, maxBytes, minRecent];
  const rows = await executor.query<PlanRow>(planSql(t), params, true);
  const leaf = rows.find((r) => r.kind === "l");
  if (!leaf) return null;
  const leafDepth = Number(leaf.depth);
  const top = Number(leaf.c);
  const byDepth = new Map<number, string>();
  place(
    rows.filter((r) => r.kind === "m"),
    byDepth,
  );
  const candidates: Candidate[] = rows
    .filter((r) => r.kind === "o")
    .map((r) => ({
      body: r.body!,
      fromDepth: Number(r.depth),
      toDepth: Number(r.c),
      order: Number(r.a),
      fromParent: r.b === null ? null : Number(r.b),
    }));
  const result = { leafDepth, top, totalBytes: Number(leaf.b) };
  if (candidates.length === 0) {
    await openPlaced(executor, t, sessionId, byDepth);
    const messages: SessionMessage[] = [];
    pushRange(messages, byDepth, top, leafDepth);
    return { messages, ...result };
  }
  // Every candidate already lies on the path, so choosing needs no further checks.
  const chosen = await chooseAndOpen(executor.query, t, sessionId, candidates);
  const bottoms: number[] = [];
  const tops: number[] = [];
  let next = top;
  for (const overlay of chosen) {
    if (overlay.fromDepth > next && overlay.fromParent !== null) {
      bottoms.push(overlay.fromParent);
      tops.push(next);
    }
    next = overlay.toDepth + 1;
  }
  if (leafDepth >= next) {
    bottoms.push(Number(leaf.a));
    tops.push(next);
  }
  if (bottoms.length > 0) {
    const segments = await executor.query<{ depth: number; content: string }>(
      segmentsSql(t),
      [bottoms, tops, ...t.layout.routeParams(sessionId)],
      true,
    );
    place(
      segments.map((s) => ({ depth: s.depth, body: s.content })),
      byDepth,
    );
  }
  await openPlaced(executor, t, sessionId, byDepth);
  const messages: SessionMessage[] = [];
  next = top;
  for (const overlay of chosen) {
    pushRange(messages, byDepth, next, overlay.fromDepth - 1);
    messages.push(overlayMessage(overlay.compaction));
    next = overlay.toDepth + 1;
  }
  pushRange(messages, byDepth, next, leafDepth);
  return { messages, ...result };
}

/** Depth of the leaf (`leafId` or the latest), or null when unknown. */
export async function leafDepth(
  executor: Executor,
  t: Tables,
  sessionId: string,
  leafId: string | null | undefined,
): Promise<number | null> {
  if (leafId !== undefined && leafId !== null && typeof leafId !== "string") return null;
  const [row] = await executor.query<{ depth: number }>(depthSql(t), [sessionId, leafId ?? null], true);
  return row ? Number(row.depth) : null;
}

/** Id, role, byte size and token estimate of every row on the path, root first. */
export async function pathStats(
  executor: Executor,
  t: Tables,
  sessionId: string,
  leafId: string | null | undefined,
): Promise<HistoryRowStat[]> {
  if (leafId !== undefined && leafId !== null && typeof leafId !== "string") return [];
  const rows = await executor.query<{
    id: string;
    role: string;
    bytes: number;
    tokens: number;
    depth: number;
  }>(statsSql(t), [sessionId, leafId ?? null], true);
  return rows
    .sort((a, b) => Number(a.depth) - Number(b.depth))
    .map((r) => ({ id: r.id, role: r.role, bytes: Number(r.bytes), tokens: Number(r.tokens) }));
}
