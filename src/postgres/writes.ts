/**
 * Writes other than append. Each runs in a transaction whose first statement locks the session head, so the
 * statements after it read a snapshot that includes every committed write to the session (see append.ts).
 */

import type { StoredCompaction } from "../contract/message.js";
import type { DeleteTip } from "../contract/provider.js";
import type { Executor, Query } from "../sql/engines/postgres/client.js";
import { guardParams, guardSql } from "../sql/engines/postgres/owner-guard.js";
import { statement } from "../sql/engines/postgres/tables.js";
import { childSql, isoSql, type Scope, spineArrays, spineCte } from "../sql/engines/postgres/tree.js";
import { forgetMessages } from "../sql/facts/postgres-engine.js";
import type { KeyedTables } from "../sql/sealing/postgres.js";
import { refused } from "../sql/sealing/postgres-key-guard.js";
import { compactionsOf, type StoredCompactionRow, storedSummary } from "../sql/sealing/postgres-summaries.js";

interface LockedHead {
  num: string | number;
  leaf_seq: string | number | null;
}

/** Locks the head of session `$1` (when it exists) and returns its number and leaf. */
export const lockHeadSql = statement(
  (t: KeyedTables) => `SELECT num, leaf_seq FROM ${t.heads} WHERE session_id = $1 FOR UPDATE`,
);

export async function lockHead(
  query: Query,
  t: KeyedTables,
  sessionId: string,
): Promise<LockedHead | undefined> {
  const [head] = await query<LockedHead>(lockHeadSql(t), [sessionId]);
  return head;
}

/**
 * Recomputes the head's cached leaf columns from the leaf row (`$2`, NULL = empty session) after a write that may
 * have moved or re-pointed it; bumps the head version so concurrent appenders know their snapshot is stale.
 */
export const refreshHeadSql = statement((t: KeyedTables): string => {
  const spine = spineArrays("sp", "lf.seq");
  const own = t.layout.scope("$5::text");
  return `WITH RECURSIVE
  lf AS (SELECT seq, id, depth, jump_seq, cum_bytes, cum_tokens FROM ${t.messages} WHERE seq = $2::bigint${own(null)}),
  ${spineCte(t.messages, "sp", "SELECT seq, jump_seq FROM lf", own)},
  leaf AS (SELECT lf.*, ${spine.seq} AS sseq, ${spine.depth} AS sdep FROM lf)
  UPDATE ${t.heads} h SET version = h.version + 1, leaf_seq = leaf.seq, leaf_id = leaf.id,
    leaf_depth = COALESCE(leaf.depth, 0), leaf_cum_bytes = COALESCE(leaf.cum_bytes, 0),
    leaf_cum_tokens = COALESCE(leaf.cum_tokens, 0), leaf_spine_seq = COALESCE(leaf.sseq, '{}'),
    leaf_spine_depth = COALESCE(leaf.sdep, '{}'), message_count = h.message_count - $3::integer, updated_at = $4
  FROM (SELECT 1) AS one LEFT JOIN leaf ON true
  WHERE h.num = $1::bigint${own("h")}`;
});

// Deletes the rows, re-attaches each surviving child to its nearest surviving ancestor (chains of deleted
// neighbours included) and drops overlays with a deleted endpoint. Returns the re-attached rows, and for a deleted
// tip ($3) its nearest surviving ancestor (NULL when none survives).
const spliceSql = statement((t: KeyedTables): string => {
  const own = t.layout.scope("$4::text");
  return `WITH RECURSIVE
  del AS (SELECT seq, parent_seq, id FROM ${t.messages} WHERE session_num = $1 AND id = ANY($2::text[])${own(null)}),
  up(seq, cur) AS (
    SELECT seq, parent_seq FROM del UNION ALL SELECT u.seq, d.parent_seq FROM up u JOIN del d ON d.seq = u.cur
  ),
  target AS (SELECT seq, cur FROM up WHERE cur IS NULL OR cur NOT IN (SELECT seq FROM del)),
  moved AS (
    UPDATE ${t.messages} c SET parent_seq = target.cur FROM target
    WHERE c.parent_seq = target.seq AND c.seq NOT IN (SELECT seq FROM del)${own("c")} RETURNING c.seq
  ),
  gone AS (DELETE FROM ${t.messages} m USING del WHERE m.seq = del.seq${own("m")} RETURNING m.seq),
  dropped AS (
    DELETE FROM ${t.compactions} WHERE session_num = $1${own(null)}
      AND (from_message_id IN (SELECT id FROM del) OR to_message_id IN (SELECT id FROM del))
  )
  SELECT (SELECT array_agg(seq) FROM moved) AS moved, (SELECT count(*) FROM gone) AS gone,
    (SELECT array_agg(id) FROM del) AS ids,
    EXISTS (SELECT 1 FROM del WHERE seq = $3::bigint) AS leaf_gone,
    (SELECT cur FROM target WHERE seq = $3::bigint) AS leaf_parent`;
});

/**
 * Recomputes depth, skip pointer and running totals below re-attached rows, in one statement: the topmost
 * re-attached rows (those not inside another one's subtree) seed a top-down recursive walk that carries each
 * row's spine, so every row is visited once. Costs O(affected subtrees).
 */
const rebuildSql = statement((t: KeyedTables): string => {
  const spine = spineArrays("tsp", "tops.seq");
  const anchor = childSql({ seq: "p.seq", depth: "p.depth", spineSeq: "a.psseq", spineDepth: "a.psdep" });
  const step = childSql({ seq: "b.seq", depth: "b.depth", spineSeq: "b.sseq", spineDepth: "b.sdep" });
  const own = t.layout.scope("$2::text");
  return `WITH RECURSIVE
  d(seq) AS (SELECT unnest($1::bigint[]) UNION ${childrenOf("d", t.messages, own)}),
  tops AS (
    SELECT r.seq, r.parent_seq FROM ${t.messages} r
    WHERE r.seq = ANY($1::bigint[]) AND (r.parent_seq IS NULL OR r.parent_seq NOT IN (SELECT seq FROM d))${own("r")}
  ),
  ${spineCte(t.messages, "tsp", `SELECT tops.seq, p.jump_seq FROM tops JOIN ${t.messages} p ON p.seq = tops.parent_seq${own("p")}`, own)},
  anchors AS (SELECT tops.seq, tops.parent_seq, ${spine.seq} AS psseq, ${spine.depth} AS psdep FROM tops),
  rb(seq, depth, jump_seq, jump_depth, sseq, sdep, cum_bytes, cum_tokens) AS (
    SELECT r.seq, ${anchor.depth}, ${anchor.jumpSeq}, ${anchor.jumpDepth}, ${anchor.spineSeq}, ${anchor.spineDepth},
      COALESCE(p.cum_bytes, 0) + r.bytes, COALESCE(p.cum_tokens, 0) + r.tokens
    FROM anchors a JOIN ${t.messages} r ON r.seq = a.seq${own("r")}
      LEFT JOIN ${t.messages} p ON p.seq = a.parent_seq${own("p")}
    UNION ALL
    SELECT c.seq, ${step.depth}, ${step.jumpSeq}, ${step.jumpDepth}, ${step.spineSeq}, ${step.spineDepth},
      b.cum_bytes + c.bytes, b.cum_tokens + c.tokens
    FROM rb b CROSS JOIN LATERAL
      (SELECT m.seq, m.bytes, m.tokens FROM ${t.messages} m WHERE m.parent_seq = b.seq${own("m")} OFFSET 0) c
  )
  UPDATE ${t.messages} m SET depth = rb.depth, jump_seq = rb.jump_seq, jump_depth = rb.jump_depth,
    cum_bytes = rb.cum_bytes, cum_tokens = rb.cum_tokens
  FROM rb WHERE m.seq = rb.seq${own("m")}`;
});

/**
 * The step of a recursive walk down the tree: the children of each row of `walk`, looked up through the
 * parent_seq index row by row. A plain join let the planner hash-join the whole table at every level when the
 * table had no statistics yet (a new store): an update or delete high up a 3,000-message path took ~1-2 s
 * instead of ~0.1. `OFFSET 0` keeps the lateral subquery from being flattened back into that join.
 */
export function childrenOf(walk: string, messages: string, scope: Scope): string {
  // The same lateral form is the step of rebuildSql's walk, which carries more columns.
  return `SELECT c.seq FROM ${walk} w CROSS JOIN LATERAL
    (SELECT m.seq FROM ${messages} m WHERE m.parent_seq = w.seq${scope("m")} OFFSET 0) c`;
}

/**
 * The newest childless row of session `$1` (`$2` its id in the Citus layout); runs only when an import names no
 * stored leaf, so one scan is fine.
 */
export const newestLeafSql = statement((t: KeyedTables): string => {
  const own = t.layout.scope("$2::text");
  return `SELECT max(m.seq) AS seq FROM ${t.messages} m WHERE m.session_num = $1${own("m")}
    AND NOT EXISTS (SELECT 1 FROM ${t.messages} c WHERE c.parent_seq = m.seq${own("c")})`;
});

// The newest childless row of `$1`'s subtree ($1 itself when it has none); $2 the session id in the Citus layout.
// O(that subtree), paid only when a delete takes the tip: usually the deleted answer's siblings.
const newestLeafBelowSql = statement((t: KeyedTables): string => {
  const own = t.layout.scope("$2::text");
  return `WITH RECURSIVE d(seq) AS (SELECT $1::bigint UNION ALL ${childrenOf("d", t.messages, own)})
  SELECT max(d.seq) AS seq FROM d
  WHERE NOT EXISTS (SELECT 1 FROM ${t.messages} c WHERE c.parent_seq = d.seq${own("c")})`;
});

/**
 * Deletes messages and splices their children onto their parents; the tip moves only if it was deleted, to its
 * nearest surviving ancestor (none: an empty path), then, unless `tip` is "ancestor", to the newest leaf below it;
 * never to a leaf outside that ancestor's subtree (contract/provider.ts DeleteTip).
 */
export async function deleteRows(
  executor: Executor,
  t: KeyedTables,
  sessionId: string,
  ids: readonly string[],
  tip: DeleteTip = "newest-leaf",
) {
  const own = t.layout.routeParams(sessionId);
  await executor.transaction(async (query) => {
    const head = await lockHead(query, t, sessionId);
    if (!head) return;
    const [result] = await query<{
      moved: (string | number)[] | null;
      gone: string | number;
      ids: string[] | null;
      leaf_gone: boolean;
      leaf_parent: string | number | null;
    }>(spliceSql(t), [head.num, [...new Set(ids)], head.leaf_seq, ...own]);
    const gone = Number(result?.gone ?? 0);
    if (!result || gone === 0) return;
    if (result.moved && result.moved.length > 0) await query(rebuildSql(t), [result.moved, ...own]);
    let leaf = result.leaf_gone ? result.leaf_parent : head.leaf_seq;
    if (result.leaf_gone && leaf !== null && tip === "newest-leaf") {
      const [below] = await query<{ seq: string | number | null }>(newestLeafBelowSql(t), [leaf, ...own]);
      leaf = below?.seq ?? leaf;
    }
    await query(refreshHeadSql(t), [head.num, leaf, gone, new Date().toISOString(), ...own]);
    await forgetMessages(query, t, sessionId, result.ids ?? []); // their facts' sources; a fact left with none goes
  });
}

/** Removes every message and overlay of a session; the head row stays (its number is never reused). */
export async function clearRows(executor: Executor, t: KeyedTables, sessionId: string): Promise<void> {
  await executor.transaction(async (query) => {
    const head = await lockHead(query, t, sessionId);
    if (!head) return;
    const own = t.layout.scope("$3::text");
    await query(
      `WITH m AS (DELETE FROM ${t.messages} WHERE session_num = $1${own(null)}),
         c AS (DELETE FROM ${t.compactions} WHERE session_num = $1${own(null)})
       UPDATE ${t.heads} SET version = version + 1, leaf_seq = NULL, leaf_id = NULL, leaf_depth = 0,
         leaf_cum_bytes = 0, leaf_cum_tokens = 0, leaf_spine_seq = '{}', leaf_spine_depth = '{}',
         message_count = 0, updated_at = $2
       WHERE num = $1${own(null)}`,
      [head.num, new Date().toISOString(), ...t.layout.routeParams(sessionId)],
    );
    await forgetMessages(query, t, sessionId, null); // the facts' sources in it; a fact left with none goes
  });
}

// $1 session, $2 id, $3 summary, $4 from, $5 to, $6 details, $7 time, $8 summary_json. A store with a keyring adds
// the key guard's parameters (key-guard.ts) from $9, as an append does: refused, nothing is written (the head
// neither) and the statement answers `keyed` false.
const compactionSql = statement((t: KeyedTables) => {
  const own = t.layout.sessionColumn("$1");
  const guard = guardSql(t, 9);
  const head = guard.and
    ? `SELECT $1::text, $7::timestamptz, $7::timestamptz WHERE true${guard.and}`
    : "VALUES ($1, $7, $7)";
  const insert = `INSERT INTO ${t.compactions} (session_num, id, summary, summary_json, from_message_id, to_message_id,
       details, created_at${own.column})
     SELECT h.num, $2, $3, $8, $4, $5, $6, $7${own.value} FROM h`;
  return `WITH ${guard.ctes}h AS (
       INSERT INTO ${t.heads} AS h (session_id, created_at, updated_at) ${head}
       ON CONFLICT (session_id) DO UPDATE SET updated_at = EXCLUDED.updated_at RETURNING h.num
     )${guard.and ? `, ins AS (${insert} RETURNING 1)\n     SELECT (SELECT keyed FROM gd) AS keyed` : `\n     ${insert}`}`;
});

/**
 * Stores an overlay in one statement. The upsert locks the head, so it serialises with deletes (which drop
 * overlays of deleted messages); it does not bump the version, since overlays do not change the tree. Its summary
 * is guarded as a message's content is (key-guard.ts): refused, it is sealed again (or refused) as a rewrite is.
 */
export async function insertCompaction(
  executor: Executor,
  t: KeyedTables,
  sessionId: string,
  compaction: StoredCompaction,
): Promise<string | null> {
  const details = compaction.details === undefined ? null : JSON.stringify(compaction.details);
  for (let tries = 0; ; tries++) {
    const summary = await storedSummary(executor.query, t, sessionId, compaction.id, compaction.summary);
    // Prepared with a keyring (its plan does not depend on the values): planned each time, the guard made a sealed
    // overlay 1.52-1.59× one without a keyring, against 1.05-1.13× before it; prepared, 0.97-1.01× (PRIVACY.md).
    const [row] = await executor.query<{ keyed: boolean }>(
      compactionSql(t),
      [
        sessionId,
        compaction.id,
        summary.content,
        compaction.fromMessageId,
        compaction.toMessageId,
        details,
        compaction.createdAt,
        summary.json,
        ...guardParams(t, summary),
      ],
      t.keys !== undefined,
    );
    if (row?.keyed !== false) return summary.sealed;
    refused(t, sessionId, summary, tries, `overlay "${compaction.id}"`);
  }
}

/** Every overlay of a session, oldest first (superseded ones included). */
export async function listCompactions(
  executor: Executor,
  t: KeyedTables,
  sessionId: string,
): Promise<StoredCompaction[]> {
  const rows = await executor.query<StoredCompactionRow>(
    `SELECT c.id, c.summary, c.summary_json, c.from_message_id, c.to_message_id, c.details,
       ${isoSql("c.created_at")} AS created_at
     FROM ${t.compactions} c JOIN ${t.heads} h ON h.num = c.session_num${t.layout.onSession("c", "h.session_id")}
     WHERE h.session_id = $1 ORDER BY c.seq`,
    [sessionId],
  );
  return compactionsOf(executor.query, t, sessionId, rows);
}
