/**
 * What a Postgres session provider and an agent step read single messages with (the SQLite twin is
 * src/sql/message-reads/sqlite.ts): the statements, and messages or a stored message's JSON with their payloads
 * restored.
 */

import type { SessionMessage } from "../../contract/message.js";
import { parseMessage } from "../../message/json.js";
import { contentHashes } from "../../store/media/offload.js";
import type { Executor } from "../engines/postgres/client.js";
import { statement, type Tables } from "../engines/postgres/tables.js";
import { hydrate } from "../media/postgres.js";
import { openContent, openContents } from "../sealing/postgres-stored-form.js";

/** One message of a session by id: $1 session, $2 id. */
export const messageSql = statement(
  (
    t,
  ) => `SELECT m.content FROM ${t.heads} h JOIN ${t.messages} m ON m.session_num = h.num${t.layout.onSession("m", "h.session_id")}
    WHERE h.session_id = $1 AND m.id = $2`,
);
/** The latest leaf of session $1. */
export const latestSql = statement(
  (t) =>
    `SELECT m.content FROM ${t.heads} h JOIN ${t.messages} m ON m.seq = h.leaf_seq${t.layout.onSession("m", "h.session_id")}
    WHERE h.session_id = $1`,
);
/** The children of message $2 of session $1, oldest first. */
export const branchesSql = statement(
  (
    t,
  ) => `SELECT c.content FROM ${t.heads} h JOIN ${t.messages} p ON p.session_num = h.num${t.layout.onSession("p", "h.session_id")}
    JOIN ${t.messages} c ON c.parent_seq = p.seq${t.layout.onSession("c", "h.session_id")}
    WHERE h.session_id = $1 AND p.id = $2 ORDER BY c.seq`,
);

/** A message's place: $1 session, $2 id. */
const placeSql = statement(
  (t) => `SELECT m.session_num AS num, m.parent_seq FROM ${t.heads} h
    JOIN ${t.messages} m ON m.session_num = h.num AND m.id = $2${t.layout.onSession("m", "h.session_id")}
    WHERE h.session_id = $1`,
);
/** The first $2 children of the message whose seq is $1 (of session $3 in the Citus layout), oldest first. */
const childrenSql = statement(
  (t) =>
    `SELECT content FROM ${t.messages} WHERE parent_seq = $1${t.layout.onSession(null, "$3")} ORDER BY seq LIMIT $2`,
);
/** The first $2 roots of session number $1 ($3 its id in the Citus layout), oldest first (the roots' index). */
const rootsSql = statement(
  (t) =>
    `SELECT content FROM ${t.messages} WHERE session_num = $1${t.layout.onSession(null, "$3")} AND parent_seq IS NULL
    ORDER BY seq LIMIT $2`,
);

/**
 * At most `limit` siblings of a message (its parent's children, its session's roots for a root), oldest first,
 * payloads restored (corrupt rows skipped); null when the message is not stored.
 */
export async function readSiblings(
  executor: Executor,
  t: Tables,
  sessionId: string,
  messageId: string,
  limit: number,
): Promise<SessionMessage[] | null> {
  const [place] = await executor.query<{ num: string; parent_seq: string | null }>(
    placeSql(t),
    [sessionId, messageId],
    true,
  );
  if (!place) return null;
  const own = t.layout.routeParams(sessionId);
  const rows =
    place.parent_seq === null
      ? await executor.query<{ content: string }>(rootsSql(t), [place.num, limit, ...own], true)
      : await executor.query<{ content: string }>(childrenSql(t), [place.parent_seq, limit, ...own], true);
  return parsed(executor, t, sessionId, rows);
}

/** The stored JSON of a message (payloads restored), for the answer to an append whose id was stored already. */
export async function storedJson(
  executor: Executor,
  t: Tables,
  sessionId: string,
  id: string,
): Promise<string | undefined> {
  const [row] = await executor.query<{ content: string }>(messageSql(t), [sessionId, id], true);
  if (!row) return undefined;
  const content = await openContent(executor.query, t, sessionId, row.content, id);
  if (contentHashes(content).length === 0) return content;
  const [restored] = await hydrate(executor, t, [parseMessage(content)]);
  return restored ? JSON.stringify(restored) : content;
}

/**
 * The message of session `sessionId` the statement `sql` reads (its `content` column), payloads restored, or
 * null; `id`, when the read is by id, must be the id its content was sealed for.
 */
export async function readMessage(
  executor: Executor,
  t: Tables,
  sql: (t: Tables) => string,
  params: unknown[],
  sessionId: string,
  id?: string,
): Promise<SessionMessage | null> {
  const [row] = await executor.query<{ content: string }>(sql(t), params, true);
  if (!row) return null;
  const content = await openContent(executor.query, t, sessionId, row.content, id);
  return (await hydrate(executor, t, [parseMessage(content)]))[0] ?? null;
}

/** Rows of a session as messages: sealed contents opened, corrupt rows skipped, payloads restored. */
async function parsed(
  executor: Executor,
  t: Tables,
  sessionId: string,
  rows: readonly { content: string }[],
): Promise<SessionMessage[]> {
  const contents = await openContents(
    executor.query,
    t,
    sessionId,
    rows.map((r) => r.content),
  );
  const messages = contents.map(parseMessage).filter((m): m is SessionMessage => m !== null);
  return hydrate(executor, t, messages);
}

/** Messages $2 (an array of ids) of session $1. */
const byIdsSql = statement(
  (t) => `SELECT m.content FROM ${t.heads} h
    JOIN ${t.messages} m ON m.session_num = h.num${t.layout.onSession("m", "h.session_id")}
    WHERE h.session_id = $1 AND m.id = ANY($2)`,
);

/** The stored messages of a session among `ids` (in no order), payloads restored: one statement (a Mastra page). */
export async function readMessagesById(
  executor: Executor,
  t: Tables,
  sessionId: string,
  ids: readonly string[],
): Promise<SessionMessage[]> {
  const rows = await executor.query<{ content: string }>(byIdsSql(t), [sessionId, ids], true);
  return parsed(executor, t, sessionId, rows);
}

/** The children of message `messageId` of a session, oldest first, payloads restored (corrupt rows skipped). */
export async function readBranches(
  executor: Executor,
  t: Tables,
  sessionId: string,
  messageId: string,
): Promise<SessionMessage[]> {
  const rows = await executor.query<{ content: string }>(branchesSql(t), [sessionId, messageId], true);
  return parsed(executor, t, sessionId, rows);
}

/**
 * A stored message of a session (payloads restored) as a replacing write reads it in its own transaction (`tx`):
 * null when the id is not stored.
 */
export async function storedMessage(
  tx: Executor,
  t: Tables,
  sessionId: string,
  id: string,
): Promise<SessionMessage | null | undefined> {
  const [row] = await tx.query<{ content: string }>(messageSql(t), [sessionId, id], true);
  if (!row) return null;
  const content = await openContent(tx.query, t, sessionId, row.content, id);
  return (await hydrate(tx, t, [parseMessage(content)]))[0];
}
