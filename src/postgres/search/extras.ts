/**
 * What a Postgres search adds to its hits, the twin of src/sqlite/search/extras.ts: the compaction overlay that
 * covers a hit (its summary stands for the hit in the history; the original is kept) and, on request, the turns
 * around it along its branch.
 */
import { storedMessageText } from "../../message/text.js";
import type { SearchPlan } from "../../search/options.js";
import type { SearchContextTurn, SearchResult } from "../../types.js";
import type { Executor } from "../connection/client.js";
import type { Tables } from "../schema.js";
import { ancestorCte, isoSql } from "../tree.js";
import type { PageHit } from "./page.js";

/** Newest overlays of a session looked at for the mark: an overlay is one summary, so a session has few. */
const MAX_OVERLAYS = 256;

interface Overlay {
  id: string;
  sessionNum: number;
  fromSeq: number;
  fromDepth: number;
  toSeq: number;
  toDepth: number;
}

/** The results of `hits`, each with its overlay mark and, when the plan asks, its context. */
export async function withExtras(
  executor: Executor,
  t: Tables,
  hits: readonly PageHit[],
  plan: SearchPlan,
): Promise<SearchResult[]> {
  if (hits.length === 0) return [];
  await markOverlays(executor, t, hits);
  if (plan.context > 0) {
    for (const hit of hits) hit.result.context = await contextOf(executor, t, hit, plan.context);
  }
  return hits.map((hit) => hit.result);
}

async function markOverlays(executor: Executor, t: Tables, hits: readonly PageHit[]): Promise<void> {
  // Sessions known to have no overlay (the page read says so) need no look-up.
  const sessions = [
    ...new Set(hits.filter((hit) => hit.overlaid !== false).map((hit) => hit.candidate.sessionNum)),
  ];
  if (sessions.length === 0) return;
  const overlays = await executor.query<Overlay>(
    `SELECT o.id, o.session_num::float8 AS "sessionNum", f.seq::float8 AS "fromSeq", f.depth AS "fromDepth",
       e.seq::float8 AS "toSeq", e.depth AS "toDepth"
     FROM unnest($1::bigint[]) s(num)
     CROSS JOIN LATERAL (
       SELECT seq, id, session_num, from_message_id, to_message_id FROM ${t.compactions} c
       WHERE c.session_num = s.num ORDER BY c.seq DESC LIMIT ${MAX_OVERLAYS}
     ) o
     JOIN ${t.messages} f ON f.session_num = o.session_num AND f.id = o.from_message_id
     JOIN ${t.messages} e ON e.session_num = o.session_num AND e.id = o.to_message_id
     ORDER BY o.seq DESC`,
    [sessions],
    true,
  );
  if (overlays.length === 0) return;
  // Each (hit, overlay) pair whose depths allow it is checked by two climbs: the hit's ancestor at the overlay's
  // first message's depth must be that message, and the overlay's last message's ancestor at the hit's depth the hit.
  const anchors: [k: number, target: number, start: number][] = [];
  const pairs: { hit: PageHit; overlay: Overlay }[] = [];
  for (const hit of hits) {
    const { seq, depth, sessionNum } = hit.candidate;
    for (const overlay of overlays) {
      if (Number(overlay.sessionNum) !== sessionNum) continue;
      if (overlay.fromDepth > depth || depth > overlay.toDepth) continue;
      const k = pairs.length;
      pairs.push({ hit, overlay });
      anchors.push([2 * k, overlay.fromDepth, seq], [2 * k + 1, depth, Number(overlay.toSeq)]);
    }
  }
  if (anchors.length === 0) return;
  const rows = await executor.query<{ k: number; seq: number }>(
    `WITH RECURSIVE ${ancestorCte(
      t.messages,
      "anc",
      "SELECT * FROM unnest($1::bigint[], $2::integer[], $3::bigint[])",
    )}
     SELECT k::float8 AS k, seq::float8 AS seq FROM anc WHERE depth = target`,
    [anchors.map((a) => a[0]), anchors.map((a) => a[1]), anchors.map((a) => a[2])],
  );
  const found = new Map(rows.map((row) => [Number(row.k), Number(row.seq)]));
  // Newest overlay first (the statement's order), so the first covering one is the mark.
  pairs.forEach(({ hit, overlay }, k) => {
    if (hit.result.compactedBy !== undefined) return;
    if (found.get(2 * k) === Number(overlay.fromSeq) && found.get(2 * k + 1) === hit.candidate.seq)
      hit.result.compactedBy = overlay.id;
  });
}

const TURN = (alias: string) =>
  `${alias}.id, ${alias}.role, ${alias}.content, ${isoSql(`${alias}.created_at`)} AS created_at`;

async function contextOf(executor: Executor, t: Tables, hit: PageHit, turns: number) {
  const { seq, depth, leafSeq } = hit.candidate;
  const before = await executor.query<TurnRow>(
    `WITH RECURSIVE up(seq, k) AS (
       SELECT parent_seq, 1 FROM ${t.messages} WHERE seq = $1
       UNION ALL SELECT m.parent_seq, up.k + 1 FROM ${t.messages} m JOIN up ON m.seq = up.seq WHERE up.k < $2
     ) SELECT ${TURN("m")} FROM up JOIN ${t.messages} m ON m.seq = up.seq ORDER BY up.k DESC`,
    [seq, turns],
  );
  let after: TurnRow[];
  if (hit.result.onActivePath === true && leafSeq !== null) {
    // Along the active path: the leaf's ancestor `turns` below the hit (or the leaf), and the path up to the hit.
    after = await executor.query<TurnRow>(
      `WITH RECURSIVE ${ancestorCte(
        t.messages,
        "anc",
        `SELECT 0, LEAST(l.depth, $2::integer + $3::integer), l.seq FROM ${t.messages} l WHERE l.seq = $1`,
      )},
       bottom AS (SELECT seq FROM anc WHERE depth = target AND depth > $2::integer),
       up(seq) AS (
         SELECT seq FROM bottom
         UNION ALL SELECT m.parent_seq FROM ${t.messages} m JOIN up ON m.seq = up.seq WHERE m.depth > $2::integer + 1
       )
       SELECT ${TURN("m")} FROM up JOIN ${t.messages} m ON m.seq = up.seq ORDER BY m.depth`,
      [leafSeq, depth, turns],
    );
  } else {
    after = await executor.query<TurnRow>(
      `WITH RECURSIVE down(seq, k) AS (
         SELECT (SELECT MAX(seq) FROM ${t.messages} WHERE parent_seq = $1), 1
         UNION ALL SELECT (SELECT MAX(c.seq) FROM ${t.messages} c WHERE c.parent_seq = down.seq), down.k + 1
           FROM down WHERE down.seq IS NOT NULL AND down.k < $2
       ) SELECT ${TURN("m")} FROM down JOIN ${t.messages} m ON m.seq = down.seq ORDER BY down.k`,
      [seq, turns],
    );
  }
  return { before: before.map(turnOf), after: after.map(turnOf) };
}

type TurnRow = { id: string; role: string; content: string; created_at: string };

function turnOf(row: TurnRow): SearchContextTurn {
  return { id: row.id, role: row.role, content: storedMessageText(row.content), createdAt: row.created_at };
}
