/**
 * What a SQLite session provider reads single messages with (the Postgres twin is src/sql/message-reads/postgres.ts):
 * where a path read starts (the head, a message and whether the session has overlays, in one statement), and one
 * stored message, parsed or as its JSON, payloads restored.
 */

import type { SessionMessage } from "../../contract/message.js";
import { canBeStored } from "../../message/ids.js";
import { parseMessage } from "../../message/json.js";
import { contentHashes } from "../../store/media/offload.js";
import { contentSql, resolveContent } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import type { NodeRow } from "../engines/sqlite/tree.js";
import { hydrate } from "../media/sqlite.js";

/** A session's head with one of its messages (the latest leaf unless named) and whether it has overlays. */
export interface Located {
  num: number;
  leaf: NodeRow | undefined;
  overlays: boolean;
}

type LocatedRow = Omit<NodeRow, "seq"> & { num: number; overlays: number; seq: number | null };

const LOCATE_COLUMNS = `h.num, EXISTS (SELECT 1 FROM agent_compactions c WHERE c.session_num = h.num) AS overlays,
  m.seq, m.parent_seq, m.depth, m.jump_seq, m.jump_depth, m.bytes, m.cum_bytes, m.tokens, m.cum_tokens
  FROM agent_session_heads h`;
const LOCATE_LATEST = `SELECT ${LOCATE_COLUMNS} LEFT JOIN agent_messages m ON m.seq = h.leaf_seq WHERE h.session_id = ?`;
const LOCATE_BY_ID = `SELECT ${LOCATE_COLUMNS} LEFT JOIN agent_messages m ON m.session_num = h.num AND m.id = ?
  WHERE h.session_id = ?`;
// A message of a session by id: ? id, ? session.
const STORED = `SELECT ${contentSql("m")} AS content FROM agent_session_heads h
  JOIN agent_messages m ON m.session_num = h.num AND m.id = ? WHERE h.session_id = ?`;

// A message's place: ? id, ? session.
const PLACE = `SELECT m.session_num AS num, m.parent_seq FROM agent_session_heads h
  JOIN agent_messages m ON m.session_num = h.num AND m.id = ? WHERE h.session_id = ?`;
/** The first ? children of message ?, oldest first: a range of agent_messages_parent (seq is its rowid order). */
export const CHILDREN = `SELECT ${contentSql()} AS content FROM agent_messages WHERE parent_seq = ? ORDER BY seq LIMIT ?`;
/** The first ? roots of session ?, oldest first: a range of the partial index agent_messages_roots. */
export const ROOTS = `SELECT ${contentSql()} AS content FROM agent_messages
  WHERE session_num = ? AND parent_seq IS NULL ORDER BY seq LIMIT ?`;

/**
 * At most `limit` siblings of a message (its parent's children, its session's roots for a root), oldest first,
 * payloads restored (corrupt rows skipped); null when the message is not stored.
 */
export function readSiblings(
  driver: SqlDriver,
  sessionId: string,
  messageId: string,
  limit: number,
): SessionMessage[] | null {
  if (!canBeStored(messageId)) return null;
  const place = driver.get<{ num: number; parent_seq: number | null }>(PLACE, [messageId, sessionId]);
  if (!place) return null;
  const rows =
    place.parent_seq === null
      ? driver.all<{ content: unknown }>(ROOTS, [place.num, limit])
      : driver.all<{ content: unknown }>(CHILDREN, [place.parent_seq, limit]);
  const messages = rows
    .map((r) => parseMessage(resolveContent(driver, r.content, sessionId)))
    .filter((m): m is SessionMessage => m !== null);
  return hydrate(driver, messages);
}

/**
 * One statement for what every path read starts from: the head, the row `leafId` names (the latest leaf when it is
 * omitted) and whether the session has overlays.
 */
export function locate(
  driver: SqlDriver,
  sessionId: string,
  leafId: string | null | undefined,
): Located | undefined {
  // An id no row can have is not looked up: better-sqlite3 would turn a lone surrogate into U+FFFD and find
  // another row (see canBeStored).
  if (leafId !== undefined && leafId !== null && !canBeStored(leafId)) return undefined;
  const row =
    typeof leafId === "string"
      ? driver.get<LocatedRow>(LOCATE_BY_ID, [leafId, sessionId])
      : driver.get<LocatedRow>(LOCATE_LATEST, [sessionId]);
  if (!row) return undefined;
  const { num, overlays, seq, ...node } = row;
  return { num, overlays: overlays !== 0, leaf: seq === null ? undefined : { seq, ...node } };
}

/**
 * The message of the row `sql` reads (its `content` column), a message of `sessionId` (`messageId`, when the
 * read is by id, is checked against sealed content), payloads restored, or null.
 */
export function readMessage(
  driver: SqlDriver,
  sql: string,
  params: (string | number)[],
  sessionId: string,
  messageId?: string,
): SessionMessage | null {
  const row = driver.get<{ content: unknown }>(sql, params);
  if (!row) return null;
  return (
    hydrate(driver, [parseMessage(resolveContent(driver, row.content, sessionId, messageId))])[0] ?? null
  );
}

/** A stored message of a session, payloads restored, or null. */
export function storedMessage(driver: SqlDriver, sessionId: string, id: string): SessionMessage | null {
  return readMessage(driver, STORED, [id, sessionId], sessionId, id);
}

/** The stored JSON of a message of a session, payloads restored, or undefined. */
export function storedJson(driver: SqlDriver, sessionId: string, id: string): string | undefined {
  const row = driver.get<{ content: unknown }>(STORED, [id, sessionId]);
  if (!row) return undefined;
  const json = resolveContent(driver, row.content, sessionId, id);
  if (contentHashes(json).length === 0) return json;
  const [message] = hydrate(driver, [parseMessage(json)]);
  return message ? JSON.stringify(message) : json;
}
