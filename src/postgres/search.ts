/**
 * Message search. The tsquery is a literal built from `parseQuery` (fts.ts); a session scope is one more ANDed
 * lexeme, so the GIN index does the scoping (no join filter). Relevance (`ts_rank`) is computed only for the
 * newest SEARCH_CANDIDATES matches, never for every match in the store. The active-path flag is computed for
 * the returned hits only, with O(log depth) skip-pointer climbs from each session's latest leaf.
 */
import { storedMessageText } from "../message.js";
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "../search/limits.js";
import { parseQuery } from "../search/query.js";
import { SEARCH_CANDIDATES, searchBranch, searchLimit } from "../store/limits.js";
import type { StoreSearchOptions } from "../store/types.js";
import type { SearchResult } from "../types.js";
import type { Executor } from "./client.js";
import { sessionLexeme, toTsquery } from "./fts.js";
import type { Tables } from "./schema.js";
import { ancestorCte, isoSql } from "./tree.js";

// $1 tsquery, $2 session id or NULL, $3 how many ranked hits to return, $4 whether only active-path hits count.
function searchSql(t: Tables): string {
  return `WITH RECURSIVE
  cand AS (
    SELECT seq, search FROM ${t.messages} WHERE search @@ $1::tsquery ORDER BY seq DESC LIMIT ${SEARCH_CANDIDATES}
  ),
  ranked AS (SELECT seq, ts_rank(search, $1::tsquery) AS rank FROM cand ORDER BY rank DESC, seq DESC LIMIT $3),
  hits AS (
    SELECT r.seq, r.rank, m.id, m.role, m.content, m.depth, ${isoSql("m.created_at")} AS created_at,
      h.session_id, h.leaf_seq
    FROM ranked r JOIN ${t.messages} m ON m.seq = r.seq JOIN ${t.heads} h ON h.num = m.session_num
    WHERE $2::text IS NULL OR h.session_id = $2::text
  ),
  ${ancestorCte(t.messages, "anc", "SELECT seq, depth, leaf_seq FROM hits WHERE leaf_seq IS NOT NULL")},
  flagged AS (
    SELECT hits.*, EXISTS (
      SELECT 1 FROM anc WHERE anc.k = hits.seq AND anc.depth = anc.target AND anc.seq = hits.seq
    ) AS on_path FROM hits
  )
  SELECT id, role, CASE WHEN on_path OR NOT $4::boolean THEN content END AS content, created_at, session_id,
    on_path
  FROM flagged ORDER BY rank DESC, seq DESC`;
}

interface HitRow {
  id: string;
  role: string;
  content: string | null;
  created_at: string;
  session_id: string;
  on_path: boolean;
}

/**
 * Full-text search across sessions (or one). With `branch: "active"` the ranked window grows until enough hits
 * on active paths are found or every candidate was looked at, so off-path matches never crowd out results.
 */
export async function searchMessages(
  executor: Executor,
  t: Tables,
  query: string,
  options: StoreSearchOptions = {},
  limits: QueryLimits = DEFAULT_QUERY_LIMITS,
): Promise<SearchResult[]> {
  const limit = searchLimit(options.limit);
  const branch = searchBranch(options.branch);
  if (typeof query !== "string") return [];
  // Parsed (and so bounded) before anything else: a query over the limits is refused even with limit 0.
  const terms = parseQuery(query, limits);
  if (limit === 0) return [];
  const sessionId = options.sessionId;
  const tsquery = toTsquery(terms, sessionId === undefined ? undefined : sessionLexeme(sessionId));
  if (tsquery === null) return [];
  const activeOnly = branch === "active";
  let window = activeOnly ? Math.min(SEARCH_CANDIDATES, Math.max(limit * 4, 40)) : limit;
  for (;;) {
    const rows = await executor.query<HitRow>(searchSql(t), [tsquery, sessionId ?? null, window, activeOnly]);
    const kept = activeOnly ? rows.filter((r) => r.on_path) : rows;
    if (kept.length >= limit || rows.length < window || window >= SEARCH_CANDIDATES) {
      return kept.slice(0, limit).map((row) => {
        return {
          id: row.id,
          role: row.role,
          content: row.content === null ? "" : storedMessageText(row.content),
          createdAt: row.created_at,
          sessionId: row.session_id,
          onActivePath: row.on_path,
        };
      });
    }
    window = Math.min(SEARCH_CANDIDATES, window * 4);
  }
}
