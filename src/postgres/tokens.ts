/**
 * Context tokens of a path from running totals: the leaf's cumulative estimate minus each compacted range plus
 * its summary message. One statement reads the leaf and the overlays whose endpoints lie on its path (one
 * skip-pointer climb through their depths, `onPathOverlaysCtes`); no message content is read, so the cost does not
 * grow with the session's length.
 */
import { overlayMessage } from "../message/overlay.js";
import { estimateMessageTokens } from "../message/tokens.js";
import type { Executor } from "../sql/engines/postgres/client.js";
import { statement, type Tables } from "../sql/engines/postgres/tables.js";
import { isoSql, onPathOverlaysCtes, overlayEndpoints, overlayOnPath } from "../sql/engines/postgres/tree.js";
import { chooseAndOpen } from "../sql/sealing/postgres-summaries.js";
import type { OverlaySpan } from "../store/overlays.js";

const tokensSql = statement((t) => {
  const own = t.layout.scope("$1::text");
  return `WITH RECURSIVE head AS (SELECT num, leaf_seq FROM ${t.heads} WHERE session_id = $1::text),
  leaf AS (
    SELECT m.seq, m.depth, m.cum_tokens, m.session_num FROM head JOIN ${t.messages} m ON m.seq = head.leaf_seq${own("m")}
    WHERE $2::text IS NULL
    UNION ALL
    SELECT m.seq, m.depth, m.cum_tokens, m.session_num FROM head
    JOIN ${t.messages} m ON m.session_num = head.num AND m.id = $2::text${own("m")}
  ),
  cand AS (
    SELECT c.seq AS k, c.id, c.summary, c.summary_json, c.from_message_id, c.to_message_id, c.details,
      ${isoSql("c.created_at")} AS created_at, f.seq AS from_seq, f.depth AS from_depth, f.cum_tokens - f.tokens AS before,
      t.seq AS to_seq, t.depth AS to_depth, t.cum_tokens AS through
    FROM leaf JOIN ${t.compactions} c ON c.session_num = leaf.session_num${own("c")}
    ${overlayEndpoints(t.messages, own)}
    WHERE t.depth <= leaf.depth AND f.depth <= t.depth
  ),
  ${onPathOverlaysCtes(t.messages, "(SELECT seq FROM leaf)", own)}
  SELECT 'l' AS kind, cum_tokens::bigint AS a, NULL::bigint AS b, NULL::integer AS from_depth,
    NULL::integer AS to_depth, NULL::bigint AS k, NULL AS body FROM leaf
  UNION ALL
  SELECT 'o', before, through, from_depth, to_depth, k,
    json_build_object('id', id, 'summary', summary, 'summary_json', summary_json, 'from_message_id', from_message_id,
      'to_message_id', to_message_id, 'details', details, 'created_at', created_at)::text
  FROM cand WHERE ${overlayOnPath("cand")}`;
});

interface TokenRow {
  kind: "l" | "o";
  a: string | number;
  b: string | number | null;
  from_depth: number | null;
  to_depth: number | null;
  k: string | number | null;
  body: string | null;
}

interface Candidate extends OverlaySpan {
  /** The overlay's row as JSON (its summary decoded or opened once chosen). */
  body: string;
  before: number;
  through: number;
}

/** Estimated tokens of the overlay-applied path to `leafId` (or the latest leaf); 0 when unknown. */
export async function contextTokens(
  executor: Executor,
  t: Tables,
  sessionId: string,
  leafId: string | null | undefined,
): Promise<number> {
  if (leafId !== undefined && leafId !== null && typeof leafId !== "string") return 0;
  const rows = await executor.query<TokenRow>(tokensSql(t), [sessionId, leafId ?? null], true);
  const leaf = rows.find((r) => r.kind === "l");
  if (!leaf) return 0;
  const candidates: Candidate[] = rows
    .filter((r) => r.kind === "o")
    .map((r) => ({
      body: r.body!,
      fromDepth: Number(r.from_depth),
      toDepth: Number(r.to_depth),
      order: Number(r.k),
      before: Number(r.a),
      through: Number(r.b),
    }));
  let tokens = Number(leaf.a);
  for (const overlay of await chooseAndOpen(executor.query, t, sessionId, candidates)) {
    tokens -= overlay.through - overlay.before;
    tokens += estimateMessageTokens([overlayMessage(overlay.compaction)]);
  }
  return tokens;
}
