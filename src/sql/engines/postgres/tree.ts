/**
 * SQL fragments for the tree columns, shared by append, delete and reads. Each message stores its depth and one
 * skip pointer (Myers' skew-binary jump pointers, as in the SQLite backend), so the ancestor of any message at a
 * given depth is reached in O(log depth) row reads: that keeps overlay resolution and active-path checks from
 * walking long paths. A row's "spine" is its chain of jump targets (jump, jump of jump, … up to a root); it has
 * O(log depth) entries and is what a child's pointer is computed from, so it is carried as arrays in recursive
 * queries and cached on the session head for the latest leaf. They are the engine's vocabulary of the tree (its
 * ground floor), so a storage concern's statements walk the tree as the history reads do.
 */

/**
 * A predicate naming a walk's session for a message alias (null: unqualified), so that Citus routes the statement
 * (sql/engines/postgres/layout.ts `scope`); none on a single node.
 */
import type { Scope } from "./layout.js";
import type { Tables } from "./tables.js";

export type { Scope };

const NO_SCOPE: Scope = () => "";

/** SQL expressions for a parent: its seq (NULL = the child is a root), depth, and spine seqs / depths. */
export interface ParentSql {
  seq: string;
  depth: string;
  spineSeq: string;
  spineDepth: string;
}

/** SQL expressions for a new child's tree columns. */
export interface ChildSql {
  depth: string;
  jumpSeq: string;
  jumpDepth: string;
  spineSeq: string;
  spineDepth: string;
}

/**
 * The tree columns of a child of `p`. Myers' rule: jump two hops along the parent's spine when the parent's two
 * spine steps have equal length, else jump to the parent. The child's spine is then the parent's spine without
 * its first entry, or the parent prepended to it.
 */
export function childSql(p: ParentSql): ChildSql {
  const skip = `(cardinality(${p.spineSeq}) >= 2 AND ${p.depth} - ${p.spineDepth}[1] = ${p.spineDepth}[1] - ${p.spineDepth}[2])`;
  const pick = (root: string, skipped: string, toParent: string) =>
    `(CASE WHEN ${p.seq} IS NULL THEN ${root} WHEN ${skip} THEN ${skipped} ELSE ${toParent} END)`;
  return {
    depth: `COALESCE(${p.depth} + 1, 0)`,
    jumpSeq: pick("NULL::bigint", `${p.spineSeq}[2]`, p.seq),
    jumpDepth: pick("0", `${p.spineDepth}[2]`, p.depth),
    spineSeq: pick("'{}'::bigint[]", `${p.spineSeq}[2:]`, `${p.seq} || ${p.spineSeq}`),
    spineDepth: pick("'{}'::integer[]", `${p.spineDepth}[2:]`, `${p.depth} || ${p.spineDepth}`),
  };
}

/**
 * A recursive CTE `name(k, seq, depth, jump_seq, n)`: the spine of every row `anchors` names. `anchors` is a
 * query returning `(k, first)` where `first` is the row's own `jump_seq`; `n` numbers the entries nearest first.
 */
export function spineCte(messages: string, name: string, anchors: string, scope = NO_SCOPE): string {
  return `${name}(k, seq, depth, jump_seq, n) AS (
    SELECT a.k, j.seq, j.depth, j.jump_seq, 1 FROM (${anchors}) AS a(k, first) JOIN ${messages} j
      ON j.seq = a.first${scope("j")}
    UNION ALL
    SELECT s.k, j.seq, j.depth, j.jump_seq, s.n + 1 FROM ${name} s JOIN ${messages} j ON j.seq = s.jump_seq${scope("j")}
  )`;
}

/** The spine arrays of anchor `k` from a {@link spineCte}, as two SQL expressions (seqs, depths). */
export function spineArrays(name: string, k: string): { seq: string; depth: string } {
  return {
    seq: `COALESCE((SELECT array_agg(s.seq ORDER BY s.n) FROM ${name} s WHERE s.k = ${k}), '{}'::bigint[])`,
    depth: `COALESCE((SELECT array_agg(s.depth ORDER BY s.n) FROM ${name} s WHERE s.k = ${k}), '{}'::integer[])`,
  };
}

/**
 * Joins `alias`, the message row whose seq is `seq`, to a recursive step, read by its primary key. A plain join
 * there was planned as a scan of the whole table per step where the table is small and its rows short (the
 * planner takes the work table for 10 rows): a 1,000-message history of short messages took 110 ms instead of 6.
 * OFFSET 0 keeps the subquery from being merged into the join, so each step is one index probe.
 */
export function stepTo(messages: string, alias: string, seq: string, scope = NO_SCOPE): string {
  return `CROSS JOIN LATERAL (SELECT * FROM ${messages} WHERE seq = ${seq}${scope(null)} OFFSET 0) ${alias}`;
}

/**
 * A recursive CTE `path(seq, parent_seq)`: the messages from `leaf` (an SQL expression of its seq) up to the root,
 * each step a primary-key probe, depth rows in all.
 */
export function pathCte(messages: string, leaf: string, scope = NO_SCOPE): string {
  return `path(seq, parent_seq) AS (SELECT seq, parent_seq FROM ${messages} WHERE seq = ${leaf}${scope(null)}
    UNION ALL SELECT m.seq, m.parent_seq FROM path p ${stepTo(messages, "m", "p.parent_seq", scope)})`;
}

/**
 * {@link pathCte} for the active paths of the sessions `sessions` (an SQL expression of a bigint[] of their numbers,
 * NULL for none): each walked from its head's leaf.
 */
export function activePathsCte(messages: string, heads: string, sessions: string, scope = NO_SCOPE): string {
  return pathCte(
    messages,
    `ANY(ARRAY(SELECT leaf_seq FROM ${heads} WHERE num = ANY(${sessions})${scope(null)}))`,
    scope,
  );
}

/**
 * A recursive CTE `name(k, target, seq, depth, parent_seq, jump_seq, jump_depth)` that climbs from each start
 * row to its ancestor at depth `target` in O(log depth) steps. `anchors` returns `(k, target, start)`; the
 * answer for `k` is the row with `depth = target` (none when the start lies above the target). With `expect`,
 * `anchors` returns `(k, target, start, expect)` and every row carries `expect`, the seq the climb should reach.
 */
export function ancestorCte(
  messages: string,
  name: string,
  anchors: string,
  expect = false,
  scope = NO_SCOPE,
): string {
  const carried = expect ? "expect, " : "";
  return `${name}(k, target, ${carried}seq, depth, parent_seq, jump_seq, jump_depth) AS (
    SELECT a.k, a.target, ${expect ? "a.expect, " : ""}m.seq, m.depth, m.parent_seq, m.jump_seq, m.jump_depth
    FROM (${anchors}) AS a(k, target, start${expect ? ", expect" : ""}) JOIN ${messages} m ON m.seq = a.start${scope("m")}
    UNION ALL
    SELECT w.k, w.target, ${expect ? "w.expect, " : ""}m.seq, m.depth, m.parent_seq, m.jump_seq, m.jump_depth
    FROM ${name} w
    -- A plain join, not stepTo: a climb is O(log depth) steps, and the forced probe raised the estimates of the
    -- statements built on it over the JIT threshold (an active-path search of 1,000 forks: 270 against 29 ms).
    JOIN ${messages} m
      ON m.seq = CASE WHEN w.jump_seq IS NOT NULL AND w.jump_depth >= w.target THEN w.jump_seq ELSE w.parent_seq END${scope("m")}
    WHERE w.depth > w.target
  )`;
}

/**
 * Joins the endpoints of each compaction `c` as `f` (its first message) and `t` (its last), each read by its
 * (session, id) key. A plain join was planned, for want of row estimates, as a scan of the session's messages per
 * compaction (250 overlays on a 1,000-message path: 11 ms of a 16 ms read).
 */
export function overlayEndpoints(messages: string, scope = NO_SCOPE): string {
  const endpoint = (alias: string, id: string) =>
    `CROSS JOIN LATERAL (SELECT seq, parent_seq, depth, tokens, cum_tokens FROM ${messages}
      WHERE session_num = c.session_num AND id = c.${id}${scope(null)} OFFSET 0) ${alias}`;
  return `${endpoint("f", "from_message_id")}\n    ${endpoint("t", "to_message_id")}`;
}

/**
 * CTEs for overlay candidates `cand(k, from_seq, from_depth, to_seq, to_depth)`: `path_at(seqs)`, one row mapping
 * each depth an endpoint has to the message at that depth on the path ending at `leafSeq` (an SQL expression);
 * {@link overlayOnPath} tests a candidate against it.
 *
 * One climb from the leaf visits the depths deepest first, each step a skip pointer that does not overshoot the
 * next depth, so a depth costs about min(gap, log depth) steps instead of a climb from the leaf each: 250 nested
 * overlays (each from the first message, ending 2–3 messages apart) take a few hundred steps in all. Not a climb
 * per candidate (~0.24 ms an overlay: 1,000 forks with an overlay each, two depths apart, took 239 ms a read), nor
 * a join of the candidates to a table of the climbs' answers (planned as nested loops over both, the candidates
 * being estimated at one row: 550 ms at 250 nested overlays).
 */
export function onPathOverlaysCtes(messages: string, leafSeq: string, scope = NO_SCOPE): string {
  // `i` indexes `ds`, the depths deepest first: the depth this step climbs to. A row at depth ds[i] is an answer,
  // and the next step climbs on to ds[i + 1].
  const next = "CASE WHEN w.depth = x.ds[w.i] THEN w.i + 1 ELSE w.i END";
  // Only depths above the leaf: a climb never comes back down to a deeper one, and would stop there.
  return `depths AS (
    SELECT array_agg(d ORDER BY d DESC) AS ds FROM (SELECT to_depth FROM cand UNION SELECT from_depth FROM cand) AS x(d)
    WHERE d <= (SELECT depth FROM ${messages} WHERE seq = ${leafSeq}${scope(null)})
  ),
  climb(i, seq, depth, jump_seq, jump_depth, parent_seq) AS (
    SELECT 1, m.seq, m.depth, m.jump_seq, m.jump_depth, m.parent_seq
    FROM depths x JOIN ${messages} m ON m.seq = ${leafSeq}${scope("m")} WHERE x.ds IS NOT NULL
    UNION ALL
    SELECT n.i, m.seq, m.depth, m.jump_seq, m.jump_depth, m.parent_seq
    FROM climb w CROSS JOIN depths x CROSS JOIN LATERAL (SELECT ${next} AS i) n
    JOIN ${messages} m
      ON m.seq = CASE WHEN w.jump_seq IS NOT NULL AND w.jump_depth >= x.ds[n.i] THEN w.jump_seq ELSE w.parent_seq END${scope("m")}
    WHERE n.i <= cardinality(x.ds) AND w.depth > x.ds[n.i]
  ),
  path_at AS (
    SELECT jsonb_object_agg(w.depth::text, w.seq) AS seqs FROM climb w CROSS JOIN depths x WHERE w.depth = x.ds[w.i]
  )`;
}

/** True for a candidate row `alias` of {@link onPathOverlaysCtes} whose both endpoints lie on the path. */
export function overlayOnPath(alias: string): string {
  const at = (depth: string) => `(SELECT seqs FROM path_at) ->> ${alias}.${depth}::text`;
  return `(${at("to_depth")} = ${alias}.to_seq::text AND ${at("from_depth")} = ${alias}.from_seq::text)`;
}

/**
 * ISO-8601 text of a timestamptz column exactly as `Date.prototype.toISOString()` writes it, independent of the
 * driver's date parsing (so transferred times re-export unchanged, whatever the year).
 */
export function isoSql(column: string): string {
  const utc = `(${column} AT TIME ZONE 'UTC')`;
  // toISOString counts astronomically (1 BC is year 0) and writes 0–9999 as four digits, others as ±six.
  const year = `(extract(year FROM ${utc}) + CASE WHEN extract(year FROM ${utc}) < 0 THEN 1 ELSE 0 END)`;
  return `(CASE WHEN ${year} BETWEEN 0 AND 9999 THEN lpad(${year}::text, 4, '0')
    ELSE CASE WHEN ${year} < 0 THEN '-' ELSE '+' END || lpad(abs(${year})::text, 6, '0') END
    || to_char(${utc}, '-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
}

const LEAF_COLUMNS =
  "m.seq, m.parent_seq, m.depth, m.jump_seq, m.jump_depth, m.bytes, m.cum_bytes, m.content, m.session_num";

/** The leaf a read starts from: `$1` session, `$2` message id or NULL for the latest leaf. */
export function leafCte(t: Tables): string {
  const own = t.layout.scope("$1::text");
  return `head AS (SELECT num, leaf_seq FROM ${t.heads} WHERE session_id = $1::text),
  leaf AS (
    SELECT ${LEAF_COLUMNS} FROM head JOIN ${t.messages} m ON m.seq = head.leaf_seq${own("m")} WHERE $2::text IS NULL
    UNION ALL
    SELECT ${LEAF_COLUMNS} FROM head JOIN ${t.messages} m ON m.session_num = head.num AND m.id = $2::text${own("m")}
  )`;
}
