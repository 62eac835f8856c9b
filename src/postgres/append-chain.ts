/**
 * A chain of messages after the latest leaf as ONE statement (an agent step of several messages on one server):
 * the head locked once, every row's tree columns computed along the chain in the statement, the rows inserted
 * together, the head moved to the last one and the registry row guarded and touched — one round trip and one
 * commit, where the general step (step.ts) sends `BEGIN`, an append per message and `COMMIT`.
 *
 * It takes the concurrency model of the single append (append.ts): the head is locked `FOR UPDATE`, so the chain
 * goes after the leaf of the append that committed last; an id of the chain stored already (a duplicate, which the
 * general step appends under as its parent), or a stale snapshot that saw such an id, inserts nothing: the caller
 * runs the general step instead. Every row is what the single append writes for it (tree columns and skip
 * pointer, bytes and tokens and their running sums, search vector with the owner lexeme, content hash).
 *
 * With `newIds` (a writer whose ids are unique across sessions, the Mastra door's save) it also checks that no
 * session holds any of the ids, probing each on the `agent_messages (id)` index, and writes nothing ("held") when
 * one does: the caller's look-up of the ids is this statement's, so a turn of new messages is one round trip. The
 * check reads the statement's snapshot, as the look-up it replaces read its own: an id another session commits
 * while the statement runs is not seen (the same session's is, by its unique index).
 */

import type { SessionMessage } from "../contract/message.js";
import type { SessionUsage } from "../contract/registry.js";
import { ownTime } from "../message/created-at.js";
import { messageText } from "../message/text.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { utf8Length } from "../runtime/bytes.js";
import type { Executor } from "../sql/engines/postgres/client.js";
import { ownedSearchSql } from "../sql/engines/postgres/fts.js";
import { guardParams, guardSql } from "../sql/engines/postgres/owner-guard.js";
import { statement, type Tables } from "../sql/engines/postgres/tables.js";
import { timestampParam } from "../sql/engines/postgres/timestamp.js";
import { childSql } from "../sql/engines/postgres/tree.js";
import { NOW, nextActivity, usageAssignments, usageFits } from "../sql/registry/postgres-writes.js";
import { type StoredForm, searchVector } from "../sql/sealing/postgres-stored-form.js";
import { usageBounds, usageDeltas } from "../store/usage-totals.js";
import { attemptOf, retried } from "./append-attempt.js";
import type { Outcome } from "./append-outcome.js";

// $1 session, then one array per column, in the chain's order: $2 ids, $3 roles, $4 contents, $5 created_at,
// $6 bytes, $7 tokens, $8 search vectors (tsvector literals or null), $9 content hashes; $10 source and $11 owner
// of the registry row (NULL = any), $12..$16 the usage and $17..$26 its bounds (usageFits); the key guard's three
// (owner-guard.ts) from $27 in a store with a keyring. `newIds`: see the module comment.
function buildChain(t: Tables, newIds: boolean): string {
  const guard = guardSql(t, 27);
  const last = "cardinality($2::text[])";
  // The first row's parent is `s`, the start (the leaf, or nothing for a root); each next row's the row before it.
  const child = (p: string) =>
    childSql({ seq: `${p}.seq`, depth: `${p}.depth`, spineSeq: `${p}.sseq`, spineDepth: `${p}.sdep` });
  const first = child("s");
  const next = child("c");
  return `WITH RECURSIVE
  ${guard.ctes}snap AS (SELECT version FROM ${t.heads} WHERE session_id = $1::text),
  batch AS (
    SELECT b.i, nextval('${t.messagesSeq}') AS seq, b.id, b.role, b.content, b.created_at, b.bytes, b.tokens,
      b.search, b.hash
    FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::integer[], $7::integer[], $8::text[],
      $9::text[]) WITH ORDINALITY AS b(id, role, content, created_at, bytes, tokens, search, hash, i)
  ),
  locked AS (
    SELECT h.num, h.leaf_seq, h.leaf_id, h.leaf_depth, h.leaf_cum_bytes, h.leaf_cum_tokens, h.leaf_spine_seq,
      h.leaf_spine_depth, h.version = (SELECT version FROM snap) AS fresh
    FROM ${t.heads} h WHERE h.session_id = $1::text FOR UPDATE
  ),
  -- Each id probed alone, as the single append's check: a generic plan of "id = ANY(ids)" could walk the thread's
  -- every row (by agent_messages_time, filtering the ids) where it judged a session short.
  ${
    newIds
      ? `held AS (
    SELECT 1 FROM unnest($2::text[]) AS x(id),
      LATERAL (SELECT 1 FROM ${t.messages} m WHERE m.id = x.id LIMIT 1) d
  ),`
      : `dup AS (
    SELECT 1 FROM locked l, unnest($2::text[]) AS x(id),
      LATERAL (SELECT 1 FROM ${t.messages} m WHERE m.session_num = l.num AND m.id = x.id LIMIT 1) d
  ),`
  }
  verdict AS (
    SELECT l.num, l.leaf_id,
      ${
        newIds
          ? "CASE WHEN EXISTS (SELECT 1 FROM held) THEN 'held' ELSE 'ok' END"
          : "CASE WHEN EXISTS (SELECT 1 FROM dup) THEN CASE WHEN l.fresh THEN 'duplicate' ELSE 'retry' END ELSE 'ok' END"
      } AS outcome
    FROM locked l
  ),
  start AS (
    SELECT l.leaf_seq AS seq, CASE WHEN l.leaf_seq IS NULL THEN NULL ELSE l.leaf_depth END AS depth,
      CASE WHEN l.leaf_seq IS NULL THEN 0 ELSE l.leaf_cum_bytes END AS cum_bytes,
      CASE WHEN l.leaf_seq IS NULL THEN 0 ELSE l.leaf_cum_tokens END AS cum_tokens,
      l.leaf_spine_seq AS sseq, l.leaf_spine_depth AS sdep
    FROM locked l, verdict v WHERE v.outcome = 'ok'
    UNION ALL
    SELECT NULL::bigint, NULL::integer, 0, 0, '{}'::bigint[], '{}'::integer[] WHERE NOT EXISTS (SELECT 1 FROM snap)${
      newIds ? " AND NOT EXISTS (SELECT 1 FROM held)" : ""
    }
  ),
  chain(i, seq, parent_seq, depth, jump_seq, jump_depth, sseq, sdep, cum_bytes, cum_tokens) AS (
    SELECT b.i, b.seq, s.seq, ${first.depth}, ${first.jumpSeq}, ${first.jumpDepth}, ${first.spineSeq},
      ${first.spineDepth}, s.cum_bytes + b.bytes, s.cum_tokens + b.tokens
    FROM start s, batch b WHERE b.i = 1
    UNION ALL
    SELECT b.i, b.seq, c.seq, ${next.depth}, ${next.jumpSeq}, ${next.jumpDepth}, ${next.spineSeq},
      ${next.spineDepth}, c.cum_bytes + b.bytes, c.cum_tokens + b.tokens
    FROM chain c JOIN batch b ON b.i = c.i + 1
  ),
  tip AS (SELECT c.*, b.id, b.created_at FROM chain c JOIN batch b ON b.i = c.i WHERE c.i = ${last}),
  created AS (
    INSERT INTO ${t.heads} AS h (session_id, version, leaf_seq, leaf_id, leaf_depth, leaf_cum_bytes,
      leaf_cum_tokens, leaf_spine_seq, leaf_spine_depth, message_count, created_at, updated_at)
    SELECT $1::text, 1, tip.seq, tip.id, tip.depth, tip.cum_bytes, tip.cum_tokens, tip.sseq, tip.sdep, ${last},
      (SELECT created_at FROM batch WHERE i = 1), tip.created_at
    FROM tip WHERE NOT EXISTS (SELECT 1 FROM snap)${guard.and}
    ON CONFLICT (session_id) DO NOTHING
    RETURNING h.num
  ),
  nums AS (SELECT num FROM verdict WHERE outcome = 'ok' UNION ALL SELECT num FROM created),
  ins AS (
    INSERT INTO ${t.messages} (seq, session_num, id, parent_seq, role, content, created_at, depth, jump_seq,
      jump_depth, bytes, cum_bytes, tokens, cum_tokens, search, content_hash)
    SELECT c.seq, n.num, b.id, c.parent_seq, b.role, b.content, b.created_at, c.depth, c.jump_seq, c.jump_depth,
      b.bytes, c.cum_bytes, b.tokens, c.cum_tokens, ${ownedSearchSql("b.search::tsvector", t.sessions, "$1::text")},
      b.hash
    FROM chain c JOIN batch b ON b.i = c.i, nums n${guard.and ? ` WHERE true${guard.and}` : ""}
    RETURNING seq
  ),
  moved AS (
    UPDATE ${t.heads} h SET version = h.version + 1, leaf_seq = tip.seq, leaf_id = tip.id, leaf_depth = tip.depth,
      leaf_cum_bytes = tip.cum_bytes, leaf_cum_tokens = tip.cum_tokens, leaf_spine_seq = tip.sseq,
      leaf_spine_depth = tip.sdep, message_count = h.message_count + ${last}, updated_at = tip.created_at
    FROM tip, verdict v WHERE v.outcome = 'ok' AND h.num = v.num AND EXISTS (SELECT 1 FROM ins)
    RETURNING h.num
  ),
  reg AS (
    UPDATE ${t.sessions} SET ${usageAssignments(12)}, updated_at = ${NOW}, activity = ${nextActivity(t, true)}
    WHERE id = $1::text AND ($10::text IS NULL OR source = $10::text) AND ($11::text IS NULL OR owner = $11::text)
      AND EXISTS (SELECT 1 FROM ins) AND ${usageFits(17)}
    RETURNING id
  )
  SELECT (SELECT min(seq) FROM ins) AS seq, (SELECT leaf_id FROM verdict) AS leaf_id,
    COALESCE((SELECT outcome FROM verdict), CASE ${
      newIds ? "WHEN EXISTS (SELECT 1 FROM held) THEN 'held' " : ""
    }WHEN EXISTS (SELECT 1 FROM created) THEN 'ok' ELSE 'retry' END) AS outcome,
    (SELECT count(*) FROM moved) AS moved${guard.and ? ", (SELECT keyed FROM gd) AS keyed" : ""},
    -- Rows inserted without their registry row (see append.ts) must not stay: the division aborts the statement.
    CASE WHEN EXISTS (SELECT 1 FROM ins) THEN 1 / (SELECT count(*)::integer FROM reg) ELSE 0 END AS registered`;
}

const appendChainSql = statement((t) => buildChain(t, false));
const newChainSql = statement((t) => buildChain(t, true));

/** One message of a chain: the message and how its row stores it (messageForm). */
export interface ChainLink {
  message: SessionMessage;
  form: StoredForm;
}

/** The registry row a chain's step guards and takes the usage of (appendRow's `registry`). */
export interface ChainRegistry {
  source: string | null;
  owner: string | null;
  usage: SessionUsage;
}

/**
 * Appends `links` (distinct ids, one key guard for all: the caller checks; more than one unless `newIds`) as a chain
 * after the latest leaf of `sessionId`. True when all were inserted; false when nothing was (an id stored already,
 * with `newIds` in any session, or the key guard refused): the caller then writes the step another way.
 * `NOT_FOUND` without the registry row.
 */
export async function appendChain(
  executor: Executor,
  t: Tables,
  sessionId: string,
  links: readonly ChainLink[],
  registry: ChainRegistry,
  newIds = false,
): Promise<boolean> {
  const times = links.map(({ message }) => {
    const given = ownTime(message);
    return given === undefined ? new Date().toISOString() : timestampParam(given, `Message "${message.id}"`);
  });
  const params: unknown[] = [
    sessionId,
    links.map(({ message }) => message.id),
    links.map(({ message }) => message.role),
    links.map(({ form }) => form.content),
    times,
    links.map(({ form }) => utf8Length(form.json)),
    links.map(({ message }) => estimateMessageTokens([message])),
    links.map(({ message, form }, i) => searchVector(messageText(message), sessionId, form, times[i]!)),
    links.map(({ form }) => form.hash),
    registry.source,
    registry.owner,
    ...usageDeltas(registry.usage),
    ...usageBounds(registry.usage),
    ...guardParams(t, links[0]!.form),
  ];
  const on = { executor, t, sessionId, registry: true, now: times[0]! };
  const row: Outcome | null = await retried(
    on,
    attemptOf(on, () => [(newIds ? newChainSql : appendChainSql)(t), params]),
    false,
  );
  return row?.seq != null;
}
