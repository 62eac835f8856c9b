/** A message's content replaced in place (updateMessage, an upsert of a stored id), its running totals shifted. */
import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { serializeMessage } from "../message/json.js";
import { messageText } from "../message/text.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { utf8Length } from "../runtime/bytes.js";
import type { Executor, Query } from "../sql/engines/postgres/client.js";
import { ownedSearchSql } from "../sql/engines/postgres/fts.js";
import { guardParams, guardSql } from "../sql/engines/postgres/owner-guard.js";
import type { Tables } from "../sql/engines/postgres/tables.js";
import { resealed } from "../sql/sealing/postgres-key-guard.js";
import { type StoredForm, searchVector, storedForm } from "../sql/sealing/postgres-stored-form.js";
import type { RowWritten } from "../store/written.js";
import { childrenOf, lockHead } from "./writes.js";

/**
 * Rewrites a stored message; role, search index and running totals follow the new content. Content whose hash
 * equals the stored one is not written (`updated: false`): the statement compares the stored hash, never the
 * content. `stored` is the message's JSON, or its stored form when the caller took it (stored-form.ts).
 */
export async function updateRow(
  executor: Executor,
  t: Tables,
  sessionId: string,
  message: SessionMessage,
  stored: string | StoredForm = serializeMessage(message),
): Promise<RowWritten<{ updated: boolean }, string>> {
  return executor.transaction(async (query) => {
    const head = await lockHead(query, t, sessionId);
    const result = head ? await rewrite(query, t, head.num, sessionId, message, stored) : undefined;
    if (!result)
      throw new SessionError("NOT_FOUND", `Message "${message.id}" is not in session "${sessionId}"`);
    return result;
  });
}

/**
 * Replaces message `message.id` of session `num` = `sessionId` (head locked by the caller) unless its stored hash is the new
 * content's; undefined when the id is not stored.
 */
export async function rewrite(
  query: Query,
  t: Tables,
  num: string | number,
  sessionId: string,
  message: SessionMessage,
  stored: string | StoredForm,
): Promise<RowWritten<{ updated: boolean }, string> | undefined> {
  // Sealed for an encrypted owner (stored-form.ts): its keyed hash still tells an identical rewrite.
  let form = typeof stored === "string" ? await storedForm(query, t, sessionId, message.id, stored) : stored;
  let old = await rewriteRow(query, t, num, sessionId, message, form);
  // Sealed under a key check another process changed meanwhile (key-guard.ts): sealed again, or refused.
  for (let tries = 0; old?.keyed === false; tries++) {
    form = await resealed(query, t, sessionId, message.id, form, tries);
    old = await rewriteRow(query, t, num, sessionId, message, form);
  }
  const bytes = utf8Length(form.json);
  const tokens = estimateMessageTokens([message]);
  if (!old) return undefined;
  if (old.same) return { result: { updated: false } };
  const byteDelta = bytes - Number(old.bytes);
  const tokenDelta = tokens - Number(old.tokens);
  if (byteDelta === 0 && tokenDelta === 0) return { result: { updated: true }, seq: old.seq };
  // Running totals of the message and everything below it shift by the same delta: O(subtree), usually 1 row.
  const at6 = t.layout.scope("$6::text");
  await query(
    `WITH RECURSIVE sub(seq) AS (
       SELECT $1::bigint UNION ALL ${childrenOf("sub", t.messages, at6)}
     ), shifted AS (
       UPDATE ${t.messages} SET cum_bytes = cum_bytes + $2, cum_tokens = cum_tokens + $3
       WHERE seq IN (SELECT seq FROM sub)${at6(null)} RETURNING seq
     )
     UPDATE ${t.heads} SET version = version + 1, updated_at = $5,
       leaf_cum_bytes = leaf_cum_bytes + CASE WHEN leaf_seq IN (SELECT seq FROM shifted) THEN $2 ELSE 0 END,
       leaf_cum_tokens = leaf_cum_tokens + CASE WHEN leaf_seq IN (SELECT seq FROM shifted) THEN $3 ELSE 0 END
     WHERE num = $4${at6(null)}`,
    [old.seq, byteDelta, tokenDelta, num, new Date().toISOString(), ...t.layout.routeParams(sessionId)],
  );
  return { result: { updated: true }, seq: old.seq };
}

/** The rewrite of one row (see {@link rewrite}): the row's old sizes, or undefined when the id is not stored. */
async function rewriteRow(
  query: Query,
  t: Tables,
  num: string | number,
  sessionId: string,
  message: SessionMessage,
  form: StoredForm,
): Promise<{ seq: string; bytes: number; tokens: number; same: boolean; keyed?: boolean } | undefined> {
  // The row keeps its first time (docs/STORAGE.md): the new text's time tokens are taken against it.
  const at3 = t.layout.scope("$3::text");
  const [first] = await query<{ ms: number }>(
    `SELECT (extract(epoch FROM created_at) * 1000)::float8 AS ms FROM ${t.messages}
     WHERE session_num = $1 AND id = $2${at3(null)}`,
    [num, message.id, ...t.layout.routeParams(sessionId)],
  );
  if (!first) return undefined;
  const search = searchVector(messageText(message), sessionId, form, first.ms);
  const at9 = t.layout.scope("$9::text");
  const guard = guardSql(t, 10, "$9::text");
  const [old] = await query<{ seq: string; bytes: number; tokens: number; same: boolean; keyed?: boolean }>(
    `WITH ${guard.ctes}old AS (SELECT seq, bytes, tokens, content_hash FROM ${t.messages} WHERE session_num = $1 AND id = $2${at9(null)}),
     upd AS (UPDATE ${t.messages} m SET content = $3, role = $4, bytes = $5, tokens = $6,
         search = ${ownedSearchSql("$7::tsvector", t.sessions, "$9::text")},
         content_hash = $8
       FROM old WHERE m.seq = old.seq AND old.content_hash IS DISTINCT FROM $8${at9("m")}${guard.and})
     SELECT seq, bytes, tokens, content_hash IS NOT DISTINCT FROM $8 AS same${guard.and ? ", (SELECT keyed FROM gd) AS keyed" : ""} FROM old`,
    [
      num,
      message.id,
      form.content,
      message.role,
      utf8Length(form.json),
      estimateMessageTokens([message]),
      search,
      form.hash,
      sessionId,
      ...guardParams(t, form),
    ],
  );
  return old;
}
