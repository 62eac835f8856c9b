/**
 * Windowed path reads on Postgres for streaming history and the byte-budgeted window (src/store/history-stream.ts,
 * src/store/recent.ts): tree columns first (no content), content only for the rows a window returns. Every
 * statement is bounded by the window it reads.
 *
 * A file per engine on purpose, behind `PathBackend` (the walk itself is written once, store/history-stream.ts):
 * the plan differs. Each round trip costs here, so each step is one statement: the leaf (latest or by id) with its
 * overlay flag, the overlays on the path in one skip-pointer climb (their sealed summaries opened together,
 * summaries.ts), an ancestor as a recursive CTE, a window's sealed contents opened in one batch; with the Citus
 * route on each. SQLite walks the same steps row by row in code (sqlite/history-stream.ts).
 */

import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import { canBeStored } from "../message/ids.js";
import type { Executor } from "../sql/engines/postgres/client.js";
import { statement, type Tables } from "../sql/engines/postgres/tables.js";
import {
  ancestorCte,
  isoSql,
  onPathOverlaysCtes,
  overlayEndpoints,
  overlayOnPath,
  stepTo,
} from "../sql/engines/postgres/tree.js";
import { hydrate } from "../sql/media/postgres.js";
import { openContents } from "../sql/sealing/postgres-stored-form.js";
import { chooseAndOpen } from "../sql/sealing/postgres-summaries.js";
import {
  type PathBackend,
  type PathItem,
  type PathRow,
  pathChanged,
  planPath,
  type WindowLimits,
  type WindowRow,
} from "../store/history-stream.js";
import { listCompactions } from "./writes.js";

const NODE = "seq, parent_seq, depth, bytes, cum_bytes";

const leafSql = statement((t) => {
  const own = t.layout.scope("$1::text");
  return `WITH head AS (SELECT num, leaf_seq FROM ${t.heads} WHERE session_id = $1::text),
  leaf AS (
    SELECT m.seq, m.parent_seq, m.depth, m.bytes, m.cum_bytes, m.session_num
    FROM head JOIN ${t.messages} m ON m.seq = head.leaf_seq${own("m")} WHERE $2::text IS NULL
    UNION ALL
    SELECT m.seq, m.parent_seq, m.depth, m.bytes, m.cum_bytes, m.session_num
    FROM head JOIN ${t.messages} m ON m.session_num = head.num AND m.id = $2::text${own("m")}
  ) SELECT leaf.*, EXISTS (SELECT 1 FROM ${t.compactions} c WHERE c.session_num = leaf.session_num${own("c")}) AS overlays
  FROM leaf`;
});

// In the Citus layout each statement below takes the session id as one more parameter, its last, which every
// reference to a per-session table names (sql/engines/postgres/layout.ts), so the statement runs on the session's shard alone.

// Overlays whose both endpoints lie on the path to $1 (seq) of session $2 at depth $3: one skip-pointer climb.
const planSql = statement((t) => {
  const own = t.layout.scope("$4::text");
  return `WITH RECURSIVE cand AS (
    SELECT c.seq AS k, c.id, c.summary, c.summary_json, c.from_message_id, c.to_message_id, c.details,
      ${isoSql("c.created_at")} AS created_at, f.seq AS from_seq, f.parent_seq AS from_parent,
      f.depth AS from_depth, t.seq AS to_seq, t.depth AS to_depth
    FROM ${t.compactions} c
    ${overlayEndpoints(t.messages, own)}
    WHERE c.session_num = $2::bigint AND t.depth <= $3::integer AND f.depth <= t.depth${own("c")}
  ),
  ${onPathOverlaysCtes(t.messages, "$1::bigint", own)}
  SELECT k, from_depth, to_depth, from_parent,
    json_build_object('id', id, 'summary', summary, 'summary_json', summary_json, 'from_message_id',
      from_message_id, 'to_message_id', to_message_id, 'details', details, 'created_at', created_at)::text AS body
  FROM cand WHERE ${overlayOnPath("cand")}`;
});

// Newest first: at most $3 rows up from $1 while depth >= $2, stopping before the row that would overflow $5
// bytes once $4 rows are taken.
const windowDownSql = statement((t) => {
  const own = t.layout.scope("$6::text");
  return `WITH RECURSIVE w(seq, parent_seq, depth, bytes, cum_bytes, content, n, acc) AS (
    SELECT ${NODE}, content, 1, bytes::bigint FROM ${t.messages}
    WHERE seq = $1::bigint AND depth >= $2::integer AND ($4::integer >= 1 OR bytes <= $5::float8)${own(null)}
    UNION ALL
    SELECT m.seq, m.parent_seq, m.depth, m.bytes, m.cum_bytes, m.content, w.n + 1, w.acc + m.bytes
    FROM w ${stepTo(t.messages, "m", "w.parent_seq", own)}
    WHERE m.depth >= $2::integer AND w.n < $3::integer AND (w.n < $4::integer OR w.acc + m.bytes <= $5::float8)
  ) SELECT ${NODE}, content FROM w ORDER BY depth DESC`;
});

// Oldest first: the rows up from $1 to depth $2 (at most $3); only those whose bytes from $2 fit $4 — the path
// holds $5 bytes above $2 — and the row at $2 carry content (the others' TOASTed content is never fetched).
const windowUpSql = statement((t) => {
  const own = t.layout.scope("$6::text");
  return `WITH RECURSIVE w(seq, parent_seq, depth, bytes, cum_bytes, n) AS (
    SELECT ${NODE}, 1 FROM ${t.messages} WHERE seq = $1::bigint AND depth >= $2::integer${own(null)}
    UNION ALL
    SELECT m.seq, m.parent_seq, m.depth, m.bytes, m.cum_bytes, w.n + 1 FROM w ${stepTo(t.messages, "m", "w.parent_seq", own)}
    WHERE m.depth >= $2::integer AND w.n < $3::integer
  ) SELECT w.seq, w.parent_seq, w.depth, w.bytes, w.cum_bytes,
    CASE WHEN w.cum_bytes - $5::float8 <= $4::float8 OR w.depth = $2::integer
      THEN (SELECT m.content FROM ${t.messages} m WHERE m.seq = w.seq${own("m")}) END AS content
  FROM w ORDER BY w.depth DESC`;
});

const ancestorSql = statement(
  (
    t,
  ) => `WITH RECURSIVE ${ancestorCte(t.messages, "anc", "SELECT 0::bigint, $2::integer, $1::bigint", false, t.layout.scope("$3::text"))}
  SELECT m.seq, m.parent_seq, m.depth, m.bytes, m.cum_bytes FROM anc JOIN ${t.messages} m ON m.seq = anc.seq${t.layout.onSession("m", "$3::text")}
  WHERE anc.depth = anc.target`,
);

type Num = string | number;
interface NodeRow {
  seq: Num;
  parent_seq: Num | null;
  depth: Num;
  bytes: Num;
  cum_bytes: Num;
}

const toRow = (r: NodeRow): PathRow<number> => ({
  key: Number(r.seq),
  parent: r.parent_seq === null ? null : Number(r.parent_seq),
  depth: Number(r.depth),
  bytes: Number(r.bytes),
  cumBytes: Number(r.cum_bytes),
});

/** The windowed reads of one session of a Postgres store. */
export class PostgresPathBackend implements PathBackend<number> {
  private num = 0;
  private overlays = false;
  /** The session as the statements' last parameter in the Citus layout (none on one node). */
  private readonly own: string[];

  constructor(
    private readonly executor: Executor,
    private readonly t: Tables,
    private readonly sessionId: string,
  ) {
    this.own = t.layout.routeParams(sessionId);
  }

  async leaf(leafId: string | null | undefined): Promise<PathRow<number> | null> {
    // An id no row can have is not looked up (see canBeStored).
    if (leafId !== undefined && leafId !== null && !canBeStored(leafId)) return null;
    const [found] = await this.executor.query<NodeRow & { session_num: Num; overlays: boolean }>(
      leafSql(this.t),
      [this.sessionId, leafId ?? null],
      true,
    );
    if (!found) return null;
    this.num = Number(found.session_num);
    this.overlays = found.overlays;
    return toRow(found);
  }

  async plan(leaf: PathRow<number>): Promise<PathItem<number>[]> {
    if (!this.overlays) return [{ kind: "rows", bottom: leaf, top: 0 }];
    const rows = await this.executor.query<{
      k: Num;
      from_depth: Num;
      to_depth: Num;
      from_parent: Num | null;
      body: string;
    }>(planSql(this.t), [leaf.key, this.num, leaf.depth, ...this.own], true);
    const candidates = rows.map((r) => ({
      body: r.body,
      fromDepth: Number(r.from_depth),
      toDepth: Number(r.to_depth),
      order: Number(r.k),
      fromParent: r.from_parent === null ? null : Number(r.from_parent),
    }));
    const chosen = await chooseAndOpen(this.executor.query, this.t, this.sessionId, candidates);
    return planPath(leaf, chosen, async (overlay, top) => {
      if (overlay.fromParent === null) return undefined;
      const limits = { top, rows: 1, maxBytes: 0, base: null, minRows: 1 };
      const [above] = await this.read(overlay.fromParent, limits);
      if (!above) throw pathChanged();
      return above;
    });
  }

  async ancestor(node: PathRow<number>, depth: number): Promise<PathRow<number>> {
    const [found] = await this.executor.query<NodeRow>(
      ancestorSql(this.t),
      [node.key, depth, ...this.own],
      true,
    );
    if (!found) throw pathChanged();
    return toRow(found);
  }

  async read(bottom: number, limits: WindowLimits): Promise<WindowRow<number>[]> {
    const { top, rows: limit, maxBytes, base, minRows } = limits;
    const rows =
      base === null
        ? await this.executor.query<NodeRow & { content: string | null }>(
            windowDownSql(this.t),
            [bottom, top, limit, minRows, maxBytes, ...this.own],
            true,
          )
        : await this.executor.query<NodeRow & { content: string | null }>(
            windowUpSql(this.t),
            [bottom, top, limit, maxBytes, base, ...this.own],
            true,
          );
    // Sealed contents (an encrypted owner's) opened; no statement when none is.
    const json = await openContents(
      this.executor.query,
      this.t,
      this.sessionId,
      rows.map((r) => r.content),
    );
    return rows.map((r, i) => ({ ...toRow(r), json: json[i] ?? null }));
  }

  async hydrate(messages: SessionMessage[]): Promise<SessionMessage[]> {
    return hydrate(this.executor, this.t, messages);
  }

  /** The session's overlays (none read when the located leaf's session has none). */
  async compactions(): Promise<StoredCompaction[]> {
    return this.overlays ? listCompactions(this.executor, this.t, this.sessionId) : [];
  }
}
