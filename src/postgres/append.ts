/**
 * appendMessage as one statement (one round trip). Concurrency model:
 *
 * - Every write to a session locks its head row, so writes to one session are serialised, and "the latest leaf"
 *   under concurrency is the message of the append that committed last (each append goes after the leaf it found
 *   once it held the lock, so N concurrent appenders build one chain, in commit order).
 * - In READ COMMITTED a statement reads one snapshot, taken before it waited for the lock: a message committed
 *   by the appender it waited for is invisible to it. So an append after the latest leaf never reads message rows:
 *   the head caches the leaf's tree columns and skip-pointer spine, and `FOR UPDATE` returns the head's newest
 *   version. A `version` counter on the head tells whether the snapshot is stale.
 * - When the snapshot is stale and the answer depends on message rows (an explicit parent other than the leaf,
 *   or an id that looks like a duplicate), the statement changes nothing and reports "retry"; a concurrent insert
 *   of the same id surfaces as a unique violation and is retried too. After a few retries the append runs inside
 *   a transaction that takes the head lock first, so its statement's snapshot is fresh.
 */

import type { SessionMessage } from "../contract/message.js";
import type { AppendResult } from "../contract/provider.js";
import type { SessionUsage } from "../contract/registry.js";
import { ownTime } from "../message/created-at.js";
import { serializeMessage } from "../message/json.js";
import { messageText } from "../message/text.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { utf8Length } from "../runtime/bytes.js";
import { type LoggedAppend, logCtes } from "../sql/change-log/postgres-append-log.js";
import type { Executor } from "../sql/engines/postgres/client.js";
import { ownedSearchSql } from "../sql/engines/postgres/fts.js";
import { guardCount, guardParams, guardSql } from "../sql/engines/postgres/owner-guard.js";
import { statement, type Tables } from "../sql/engines/postgres/tables.js";
import { timestampParam } from "../sql/engines/postgres/timestamp.js";
import { childSql, spineArrays, spineCte } from "../sql/engines/postgres/tree.js";
import { NOW, nextActivity, usageAssignments, usageFits } from "../sql/registry/postgres-writes.js";
import { resealed } from "../sql/sealing/postgres-key-guard.js";
import { type StoredForm, searchVector, storedForm } from "../sql/sealing/postgres-stored-form.js";
import { usageBounds, usageDeltas } from "../store/usage-totals.js";
import type { RowWritten } from "../store/written.js";
import { attemptOf, retried } from "./append-attempt.js";
import { type Outcome, settle } from "./append-outcome.js";
import { citusSteps } from "./citus-steps.js";

// $1 session, $2 id, $3 explicit parent id, $4 mode ('leaf' | 'root' | 'id'), $5 check expected leaf,
// $6 expected leaf id, $7 role, $8 content, $9 created_at, $10 bytes, $11 tokens, $12 search vector,
// $13 content hash. The vector takes the owner lexeme of the session's registry row, if any (sql/engines/postgres/fts.ts).
// `explicit` adds the parent lookup by id (and its spine); appends after the tip or as a root leave it out, which
// makes the statement noticeably cheaper to parse and plan where it cannot be prepared (PGlite).
// `registry` (the agent step, appendRow's `registry`) adds $14 source and $15 owner (NULL = any), $16..$20 the
// usage counters and $21..$30 their bounds (usageFits): the registry row takes them in the same statement, only
// when the message was inserted, the row is of that source and owner, and every total stays in range.
// `logged` adds the change-log row (append-log.ts) after the other parameters: it commits with the message.
// A store with a keyring adds two more, the owner hash and key check a sealed content relied on (sealing.ts
// KeyGuard; null for content in clear): nothing is written unless that check is still the recorded one and the
// session still that owner's. On one server a third makes them a clear guard (key-guard.ts): nothing is written if
// the owner has a check recorded (or the session another owner).
function buildAppend(t: Tables, explicit: boolean, registry = false, logged = false): string {
  const scope = (alias: string | null) => t.layout.onSession(alias, "$1::text");
  const own = t.layout.sessionColumn("$1::text");
  const at = 14 + (registry ? 17 : 0) + (logged ? 3 : 0);
  const guard = guardSql(t, at);
  // In the Citus layout the parent comes read as parameters after the others (citus/parent.ts).
  const given = t.layout.routedAppend ? citusSteps(t).parentCtes(at + guardCount(t)) : undefined;
  const spine = given ?? spineArrays("pspine", "p.seq");
  const parentSteps = `p AS (
    SELECT m.seq, m.depth, m.jump_seq, m.cum_bytes, m.cum_tokens FROM ${t.messages} m, locked l
    WHERE $4::text = 'id' AND l.leaf_id IS DISTINCT FROM $3::text AND m.session_num = l.num AND m.id = $3::text${scope("m")}
  ),
  ${spineCte(t.messages, "pspine", "SELECT seq, jump_seq FROM p", scope)},`;
  const child = childSql({
    seq: "par.seq",
    depth: "par.depth",
    spineSeq: "par.sseq",
    spineDepth: "par.sdep",
  });
  // RECURSIVE only where the parent's spine is walked: it makes the statement measurably slower to analyse.
  return `WITH${explicit && !given ? " RECURSIVE" : ""}
  ${guard.ctes}snap AS (SELECT version FROM ${t.heads} WHERE session_id = $1::text),
  alloc AS (SELECT nextval('${t.messagesSeq}') AS seq),
  created AS (
    INSERT INTO ${t.heads} AS h (session_id, version, leaf_seq, leaf_id, leaf_depth, leaf_cum_bytes,
      leaf_cum_tokens, message_count, created_at, updated_at)
    SELECT $1::text, 1, alloc.seq, $2::text, 0, $10::integer, $11::integer, 1, $9::timestamptz, $9::timestamptz
    FROM alloc
    WHERE NOT EXISTS (SELECT 1 FROM snap) AND $4::text <> 'id' AND (NOT $5::boolean OR $6::text IS NULL)${guard.and}
    ON CONFLICT (session_id) DO NOTHING
    RETURNING h.num
  ),
  locked AS (
    SELECT h.num, h.leaf_seq, h.leaf_id, h.leaf_depth, h.leaf_cum_bytes, h.leaf_cum_tokens, h.leaf_spine_seq,
      h.leaf_spine_depth, h.version = (SELECT version FROM snap) AS fresh
    FROM ${t.heads} h WHERE h.session_id = $1::text${
      // Citus runs each CTE as a statement of its own, so this one sees the head \`created\` inserted: without the
      // guard the first message would be inserted twice (a unique violation that aborts a caller's transaction).
      t.layout.ctesRunApart ? " AND NOT EXISTS (SELECT 1 FROM created)" : ""
    } FOR UPDATE
  ),
  dup AS (SELECT 1 FROM ${t.messages} m, locked l WHERE m.session_num = l.num AND m.id = $2::text${scope("m")}),
  ${explicit ? (given ? given.ctes : parentSteps) : ""}
  par AS (
    SELECT l.leaf_seq AS seq, l.leaf_depth AS depth, l.leaf_cum_bytes AS cum_bytes,
      l.leaf_cum_tokens AS cum_tokens, l.leaf_spine_seq AS sseq, l.leaf_spine_depth AS sdep, true AS from_head
    FROM locked l WHERE l.leaf_seq IS NOT NULL AND ($4::text = 'leaf' OR ($4::text = 'id' AND l.leaf_id = $3::text))
    ${explicit ? `UNION ALL SELECT p.seq, p.depth, p.cum_bytes, p.cum_tokens, ${spine.seq}, ${spine.depth}, false FROM p` : ""}
  ),
  verdict AS (
    SELECT l.num, l.leaf_id, CASE
      WHEN EXISTS (SELECT 1 FROM dup) THEN CASE WHEN l.fresh THEN 'duplicate' ELSE 'retry' END
      WHEN $5::boolean AND l.leaf_id IS DISTINCT FROM $6::text THEN 'conflict'
      WHEN $4::text = 'id' AND NOT EXISTS (SELECT 1 FROM par) THEN CASE WHEN l.fresh THEN 'missing' ELSE 'retry' END
      WHEN NOT l.fresh AND $4::text = 'id' AND NOT (SELECT from_head FROM par) THEN 'retry'
      ELSE 'ok' END AS outcome
    FROM locked l
  ),
  node AS (
    SELECT v.num, par.seq AS parent_seq, ${child.depth} AS depth, ${child.jumpSeq} AS jump_seq,
      ${child.jumpDepth} AS jump_depth, ${child.spineSeq} AS sseq, ${child.spineDepth} AS sdep,
      COALESCE(par.cum_bytes, 0) + $10::integer AS cum_bytes, COALESCE(par.cum_tokens, 0) + $11::integer AS cum_tokens
    FROM verdict v LEFT JOIN par ON true WHERE v.outcome = 'ok'
    UNION ALL
    SELECT c.num, NULL::bigint, 0, NULL::bigint, 0, '{}'::bigint[], '{}'::integer[], $10::integer, $11::integer
    FROM created c
  ),
  ins AS (
    INSERT INTO ${t.messages} (seq, session_num, id, parent_seq, role, content, created_at, depth, jump_seq,
      jump_depth, bytes, cum_bytes, tokens, cum_tokens, search, content_hash${own.column})
    SELECT alloc.seq, n.num, $2::text, n.parent_seq, $7::text, $8::text, $9::timestamptz, n.depth, n.jump_seq,
      n.jump_depth, $10::integer, n.cum_bytes, $11::integer, n.cum_tokens,
      ${ownedSearchSql("$12::tsvector", t.sessions, "$1::text")}, $13::text${own.value}
    FROM node n, alloc${guard.and ? ` WHERE true${guard.and}` : ""}
    RETURNING seq
  ),
  moved AS (
    UPDATE ${t.heads} h SET version = h.version + 1, leaf_seq = ins.seq, leaf_id = $2::text, leaf_depth = n.depth,
      leaf_cum_bytes = n.cum_bytes, leaf_cum_tokens = n.cum_tokens, leaf_spine_seq = n.sseq,
      leaf_spine_depth = n.sdep, message_count = h.message_count + 1, updated_at = $9::timestamptz
    FROM ins, node n WHERE h.num = n.num${scope("h")}
    RETURNING h.num
  )${
    registry
      ? `,
  reg AS (
    UPDATE ${t.sessions} SET ${usageAssignments(16)}, updated_at = ${NOW}, activity = ${nextActivity(t, true)}
    WHERE id = $1::text AND ($14::text IS NULL OR source = $14::text) AND ($15::text IS NULL OR owner = $15::text)
      AND EXISTS (SELECT 1 FROM ins) AND ${usageFits(21)}
    RETURNING id
  )`
      : ""
  }${logged ? logCtes(t, registry ? 31 : 14) : ""}
  SELECT (SELECT seq FROM ins) AS seq,${logged ? " (SELECT seq FROM nt) AS logged," : ""} (SELECT leaf_id FROM verdict) AS leaf_id,
    COALESCE((SELECT outcome FROM verdict), CASE
      WHEN EXISTS (SELECT 1 FROM created) THEN 'ok'
      WHEN $5::boolean AND $6::text IS NOT NULL THEN 'conflict'
      WHEN $4::text = 'id' THEN 'missing'
      ELSE 'retry' END) AS outcome,
    (SELECT count(*) FROM moved) AS moved${guard.and ? ", (SELECT keyed FROM gd) AS keyed" : ""}${
      // A message inserted without its registry row (none, another source's or owner's, deleted meanwhile, or one whose
      // totals the usage would carry out of range) must not stay: dividing by the zero rows updated aborts the
      // whole statement (SQLSTATE 22012, reported NOT_FOUND; the step tells a refused total apart, see step.ts).
      registry
        ? `,
    CASE WHEN EXISTS (SELECT 1 FROM ins) THEN 1 / (SELECT count(*)::integer FROM reg) ELSE 0 END AS registered`
        : ""
    }`;
}

/** @internal the append statement for an explicit parent id (exported for EXPLAIN in benchmarks). */
export const appendSql = statement((t) => buildAppend(t, true));
/** @internal the append statement after the latest leaf or as a new root. */
export const appendTipSql = statement((t) => buildAppend(t, false));
/** @internal the appends above that also add to the registry row's counters (the agent step). */
const appendStepSql = statement((t) => buildAppend(t, true, true));
const appendTipStepSql = statement((t) => buildAppend(t, false, true));
/** The four statements above, indexed [explicit][registry], and the same that also insert their change-log row. */
const unloggedSql = [
  [appendTipSql, appendTipStepSql],
  [appendSql, appendStepSql],
] as const;
const loggedSql = [
  [statement((t) => buildAppend(t, false, false, true)), statement((t) => buildAppend(t, false, true, true))],
  [statement((t) => buildAppend(t, true, false, true)), statement((t) => buildAppend(t, true, true, true))],
] as const;

/** Where an append puts a message and what it knows of it already. */
export interface AppendRequest {
  /** Omitted = after the latest leaf, `null` = a new root, a string = that message. */
  parentId: string | null | undefined;
  /** Optimistic concurrency (see AppendOptions). */
  expectedLeafId?: string | null | undefined;
  /** The message's JSON, when the caller has it already, and how it is stored (stored-form.ts) when known. */
  json?: string | undefined;
  form?: StoredForm | undefined;
  /** The row's time (imports keep the original one); default the message's own createdAt, else now. */
  createdAt?: string | undefined;
  /**
   * The registry row (of this `source` and `owner` when not null) takes `usage` (checked: `checkUsage`) in the same
   * statement when the message is inserted; without the row, or when a total would leave its range, nothing is
   * written and the append fails `NOT_FOUND`.
   */
  registry?: { source: string | null; owner: string | null; usage: SessionUsage } | undefined;
  /** The store's change log: an inserted message commits with its row (append-log.ts); kind of the row. */
  log?: LoggedAppend | undefined;
}

/** Appends one message to a session (see the module comment for the concurrency rules). */
export async function appendRow(
  executor: Executor,
  t: Tables,
  sessionId: string,
  message: SessionMessage,
  request: AppendRequest,
): Promise<RowWritten<AppendResult, string>> {
  const content = request.form?.json ?? request.json ?? serializeMessage(message);
  let form = request.form ?? (await storedForm(executor.query, t, sessionId, message.id, content));
  let row = await appendOnce(executor, t, sessionId, message, request, content, form);
  // Sealed under a key check another process changed meanwhile (a rotation): sealed again, or refused.
  for (let tries = 0; row?.keyed === false; tries++) {
    form = await resealed(executor.query, t, sessionId, message.id, form, tries);
    row = await appendOnce(executor, t, sessionId, message, request, content, form);
  }
  return settle(row, sessionId, message, request);
}

async function appendOnce(
  executor: Executor,
  t: Tables,
  sessionId: string,
  message: SessionMessage,
  request: AppendRequest,
  content: string,
  form: StoredForm,
): Promise<Outcome | null> {
  const { parentId, expectedLeafId, registry, log } = request;
  // The message's time (docs/STORAGE.md, "A message's time"); a year outside 1–9999 in the form timestamptz reads
  // (as the transfer's import writes it). The head's times take it too: nothing reads them on Postgres.
  const given = request.createdAt ?? ownTime(message);
  const now =
    given === undefined ? new Date().toISOString() : timestampParam(given, `Message "${message.id}"`);
  const mode = parentId === undefined ? "leaf" : parentId === null ? "root" : "id";
  const params: unknown[] = [
    sessionId,
    message.id,
    typeof parentId === "string" ? parentId : null,
    mode,
    expectedLeafId !== undefined,
    expectedLeafId ?? null,
    message.role,
    form.content,
    now,
    utf8Length(content),
    estimateMessageTokens([message]),
    searchVector(messageText(message), sessionId, form, now),
    form.hash,
  ];
  if (registry) {
    const { usage } = registry;
    params.push(registry.source, registry.owner, ...usageDeltas(usage), ...usageBounds(usage));
  }
  if (log) params.push(log.log.origin, log.kind, JSON.stringify([message.id]));
  params.push(...guardParams(t, form));
  const sql = (log ? loggedSql : unloggedSql)[mode === "id" ? 1 : 0][registry ? 1 : 0](t);
  const on = { executor, t, sessionId, registry: registry !== undefined, now };
  if (!t.layout.routedAppend)
    return retried(
      on,
      attemptOf(on, () => [sql, params]),
      false,
    );
  // On Citus one delegated call, unless sealed (citus/append-path.ts).
  const guarded = form.guard !== undefined;
  const row = await citusSteps(t).append(on, {
    messageId: message.id,
    parentId,
    sql,
    params,
    guarded,
    clear: form.clear,
    log,
  });
  // The routed call's clear guard refused (the owner has a key check now, or the session another owner).
  return row?.outcome === "keyed" ? { ...row, keyed: false } : row;
}
