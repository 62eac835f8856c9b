/**
 * The fact channel's question to Postgres ranked recall (search/pipeline.ts `seqsOf`, docs/FACTS.md#recall): the
 * rows of the facts' sources that lie in the search's scope (its session, its set, its owner's sessions; on their
 * active paths for an active-branch search), all read at once by the (session, message id) key: one statement on a
 * single server; in the Citus layout one per shard that holds the sources' sessions, each naming its sessions in
 * every table reference, so Citus routes it to that shard's worker. No index beyond the messages' (session, id) key.
 */

import type { FactSource } from "../../contract/facts.js";
import { factSourceKey } from "../../search/fact-fusion.js";
import type { SearchPlan } from "../../search/options.js";
import type { Executor } from "../../sql/engines/postgres/client.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { isoSql } from "../../sql/engines/postgres/tree.js";
import { type CandidateColumns, candidateOf, onPathOf } from "../../sql/search/postgres-page.js";
import { citusSteps } from "../citus-steps.js";
import type { Node } from "./candidate-rows.js";

// $1 session ids and $2 message ids (pairs), $3 the owner searched (NULL: none), and in the Citus layout $4 the
// sessions of one shard, named in every table reference: each source's row, with what the page needs.
function sourcesSql(t: Tables): string {
  const own = t.layout.sessionsScope("$4::text[]");
  const ownRegistry = t.layout.onSessions("r", "$4::text[]", "id");
  return `SELECT m.seq::float8 AS seq, m.id, m.role, ${isoSql("m.created_at")} AS created_at, m.depth, h.session_id,
    h.num::float8 AS session_num, h.leaf_seq::float8 AS leaf_seq, h.leaf_depth, h.message_count
  FROM unnest($1::text[], $2::text[]) s(session_id, id)
    JOIN ${t.heads} h ON h.session_id = s.session_id${own("h")}
    JOIN ${t.messages} m ON m.session_num = h.num AND m.id = s.id${own("m")}
  WHERE $3::text IS NULL
    OR EXISTS (SELECT 1 FROM ${t.sessions} r WHERE r.id = h.session_id AND r.owner = $3::text${ownRegistry})`;
}

interface SourceRow extends CandidateColumns {
  id: string;
}

/**
 * The seqs of `sources` in the search's scope, by `factSourceKey`. Each one found joins `nodes` (the page reads its
 * hit from there) and, in an active-branch search, `onPath` (whether it lies on its session's active path); one off
 * its path is out of scope. Bounded by the sources given: at most a page of facts' sources, none read store-wide.
 */
export async function sourceSeqs(
  executor: Executor,
  t: Tables,
  plan: SearchPlan,
  sources: readonly FactSource[],
  nodes: Map<number, Node>,
  onPath: Map<number, boolean>,
): Promise<Map<string, number>> {
  const wanted = new Map<string, FactSource>();
  for (const source of sources) {
    if (plan.sessionId !== undefined && source.sessionId !== plan.sessionId) continue;
    if (plan.sessionIds !== undefined && !plan.sessionIds.has(source.sessionId)) continue;
    wanted.set(factSourceKey(source), source);
  }
  const found = new Map<string, number>();
  if (wanted.size === 0) return found;
  const rows = await readSources(executor, t, plan.owner ?? null, [...wanted.values()]);
  // A source the candidates hold already keeps its node; another is read for the page (no weight: ranked already).
  for (const row of rows) {
    const seq = Number(row.seq);
    if (!nodes.has(seq)) nodes.set(seq, { ...candidateOf(row), parent: null, tokens: 0 });
  }
  if (plan.activeOnly) {
    const unknown = [...new Set(rows.map((row) => nodes.get(Number(row.seq))!))].filter(
      (node) => node.branched && !onPath.has(node.seq),
    );
    for (const [seq, on] of await onPathOf(executor, t, unknown)) onPath.set(seq, on);
  }
  for (const row of rows) {
    const node = nodes.get(Number(row.seq))!;
    if (plan.activeOnly && node.branched && onPath.get(node.seq) !== true) continue;
    found.set(factSourceKey({ sessionId: row.session_id, messageId: row.id }), node.seq);
  }
  return found;
}

/** The rows of `sources`, of the owner's sessions only when `owner` is given. */
async function readSources(
  executor: Executor,
  t: Tables,
  owner: string | null,
  sources: readonly FactSource[],
): Promise<SourceRow[]> {
  const read = (some: readonly FactSource[], sessions: readonly string[]) =>
    executor.query<SourceRow>(sourcesSql(t), [
      some.map((s) => s.sessionId),
      some.map((s) => s.messageId),
      owner,
      ...t.layout.routeParams(sessions),
    ]);
  const sessions = [...new Set(sources.map((s) => s.sessionId))];
  if (!t.layout.readsPerShard || sessions.length === 1) return read(sources, sessions);
  // Citus: one statement per shard holding the sources' sessions, each routed to its worker.
  const rows: SourceRow[] = [];
  for (const group of await citusSteps(t).byShard(executor, t, sessions)) {
    const inGroup = new Set(group);
    rows.push(
      ...(await read(
        sources.filter((s) => inGroup.has(s.sessionId)),
        group,
      )),
    );
  }
  return rows;
}
