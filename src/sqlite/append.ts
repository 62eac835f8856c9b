import type { SessionMessage } from "../contract/message.js";
import type { AppendResult } from "../contract/provider.js";
import { SessionError } from "../errors.js";
import { ownTime } from "../message/created-at.js";
import { serializeMessage } from "../message/json.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { utf8Length } from "../runtime/bytes.js";
import { storedContent, writeChunks } from "../sql/engines/sqlite/chunks.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { childJump, type JumpFields, type JumpNode, nodeBySeq } from "../sql/engines/sqlite/tree.js";
import { type SealKey, storedForm } from "../sql/sealing/sqlite.js";
import { afterInsert, indexedSeq } from "../sql/search/sqlite-indexing.js";
import type { WriteGuard } from "../store/crypto/content-keys.js";
import { refusePayloadPointer } from "../store/crypto/seal.js";
import type { RowWritten } from "../store/written.js";

/** What an append must know, read by one statement: the head, the parent, its jump target, the index watermark. */
export interface AppendContext {
  num: number;
  leaf_seq: number | null;
  indexed_seq: number;
  p_id: string | null;
  p_seq: number | null;
  p_depth: number;
  p_jump_seq: number | null;
  p_jump_depth: number;
  p_cum_bytes: number;
  p_cum_tokens: number;
  t_seq: number | null;
  t_jump_seq: number | null;
  t_jump_depth: number;
}

const CONTEXT_COLUMNS = `h.num, h.leaf_seq, s.indexed_seq, p.id AS p_id, p.seq AS p_seq, p.depth AS p_depth, p.jump_seq AS p_jump_seq,
  p.jump_depth AS p_jump_depth, p.cum_bytes AS p_cum_bytes, p.cum_tokens AS p_cum_tokens,
  t.seq AS t_seq, t.jump_seq AS t_jump_seq, t.jump_depth AS t_jump_depth
  FROM agent_session_heads h JOIN agent_search_state s ON s.id = 1`;

// Parameter: session id. The parent is the latest leaf.
const CONTEXT_AFTER_LEAF = `SELECT ${CONTEXT_COLUMNS}
  LEFT JOIN agent_messages p ON p.seq = h.leaf_seq
  LEFT JOIN agent_messages t ON t.seq = p.jump_seq
  WHERE h.session_id = ?`;

// Parameters: parent id, session id.
const CONTEXT_WITH_PARENT = `SELECT ${CONTEXT_COLUMNS}
  LEFT JOIN agent_messages p ON p.session_num = h.num AND p.id = ?
  LEFT JOIN agent_messages t ON t.seq = p.jump_seq
  WHERE h.session_id = ?`;

const MESSAGE_COLUMNS = `INSERT INTO agent_messages (session_num, id, parent_seq, role, content, created_at, depth,
  jump_seq, jump_depth, bytes, cum_bytes, tokens, cum_tokens, chunks, content_hash)`;
const INSERT_MESSAGE = `${MESSAGE_COLUMNS}
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_num, id) DO NOTHING RETURNING seq`;
// A sealed row under a key check read before this transaction (content-keys.ts knownWriteKey): inserted only while
// that check is still the owner's recorded one and the session still that owner's (the owner itself compared: SQLite
// has no SHA-256 to hash it with; four more parameters: owner hash, check, session id, owner).
const INSERT_GUARDED = `${MESSAGE_COLUMNS}
  SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
  WHERE EXISTS (SELECT 1 FROM agent_owner_keys WHERE owner_hash = ? AND key_check = ?)
    AND EXISTS (SELECT 1 FROM agent_sessions WHERE id = ? AND owner = ?)
  ON CONFLICT (session_num, id) DO NOTHING RETURNING seq`;

// A row in clear of a session a write of this store found in clear (content-keys.ts knownClear), unread: inserted
// only while the owner found (its hash; null: none) has no recorded key check and the session still has that owner
// (three more parameters: owner hash, session id, owner). Two index look-ups inside the insert, no statement more.
const INSERT_CLEAR = `${MESSAGE_COLUMNS}
  SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
  WHERE NOT EXISTS (SELECT 1 FROM agent_owner_keys WHERE owner_hash = ?)
    AND (SELECT owner FROM agent_sessions WHERE id = ?) IS ?
  ON CONFLICT (session_num, id) DO NOTHING RETURNING seq`;

/** What a write in clear relied on without reading it: the session's owner found, and its hash (null: none). */
export interface ClearGuard {
  owner: string | null;
  ownerHash: string | null;
}

/** Where an append puts a message and what it knows of it already. */
export interface AppendRequest {
  /** Omitted = after the latest leaf, `null` = a new root, a string = that message. */
  parentId: string | null | undefined;
  /** Optimistic concurrency (see AppendOptions). */
  expectedLeafId?: string | null | undefined;
  /** The message's JSON, when the caller has it already. */
  json?: string | undefined;
  /** The row's time (imports keep the original one); default the message's own createdAt, else now. */
  createdAt?: string | undefined;
  /** The key to seal with, when the caller checked it in this transaction (sealing.ts SealKey). */
  key?: SealKey;
  /**
   * The check `key` was verified under earlier and the session's cached owner, unread in this transaction: the
   * insert requires both to be still so.
   */
  guard?: WriteGuard | undefined;
  /** The owner a write found the session stored in clear with, unread in this transaction (see INSERT_CLEAR). */
  clear?: ClearGuard | undefined;
  /**
   * The context of a child of the parent `parentId` as this transaction's previous append answered it (`child`):
   * not read again. Taken only when it is that parent's.
   */
  context?: AppendContext | undefined;
}

/** An append's record, and for an inserted row the context of its child (a chain's next append; lazy). */
export type Appended = RowWritten<AppendResult> & { child?: () => AppendContext };

/** The head row of a session, created on its first write (inside the caller's transaction). */
export function ensureHead(driver: SqlDriver, sessionId: string): { num: number; leaf_seq: number | null } {
  const head = driver.get<{ num: number; leaf_seq: number | null }>(
    "SELECT num, leaf_seq FROM agent_session_heads WHERE session_id = ?",
    [sessionId],
  );
  return head ?? createHead(driver, sessionId);
}

function createHead(driver: SqlDriver, sessionId: string): { num: number; leaf_seq: number | null } {
  const now = new Date().toISOString();
  return driver.get<{ num: number; leaf_seq: number | null }>(
    "INSERT INTO agent_session_heads (session_id, created_at, updated_at) VALUES (?, ?, ?) RETURNING num, leaf_seq",
    [sessionId, now, now],
  )!;
}

function readContext(
  driver: SqlDriver,
  sessionId: string,
  parentId: string | null | undefined,
): AppendContext | undefined {
  if (typeof parentId === "string")
    return driver.get<AppendContext>(CONTEXT_WITH_PARENT, [parentId, sessionId]);
  return driver.get<AppendContext>(CONTEXT_AFTER_LEAF, [sessionId]);
}

/** The parent's tree columns an append uses, and the skip pointer its new child gets. */
function parentOf(ctx: AppendContext): (JumpNode & { cum_bytes: number; cum_tokens: number }) | undefined {
  if (ctx.p_seq === null) return undefined;
  return {
    seq: ctx.p_seq,
    depth: ctx.p_depth,
    jump_seq: ctx.p_jump_seq,
    jump_depth: ctx.p_jump_depth,
    cum_bytes: ctx.p_cum_bytes,
    cum_tokens: ctx.p_cum_tokens,
  };
}

// The parent's own jump target as the joined columns give it: the parent itself when it has no pointer.
function jumpTargetOf(ctx: AppendContext, parent: JumpNode): JumpFields | undefined {
  if (parent.jump_seq === null) return parent;
  return ctx.t_seq === null ? undefined : { jump_seq: ctx.t_jump_seq, jump_depth: ctx.t_jump_depth };
}

// A duplicate id is no error whatever else is wrong with the call (idempotent retries): checked before failing.
function isDuplicate(driver: SqlDriver, num: number, id: string): boolean {
  return (
    driver.get("SELECT 1 AS found FROM agent_messages WHERE session_num = ? AND id = ?", [num, id]) !==
    undefined
  );
}

function leafIdOf(driver: SqlDriver, ctx: AppendContext, parentId: string | null | undefined): string | null {
  if (ctx.leaf_seq === null) return null;
  if (typeof parentId !== "string" || (ctx.p_seq !== null && ctx.p_seq === ctx.leaf_seq)) return ctx.p_id;
  return (
    driver.get<{ id: string }>("SELECT id FROM agent_messages WHERE seq = ?", [ctx.leaf_seq])?.id ?? null
  );
}

/**
 * Appends one message in one write transaction of three statements: one read of the head joined with the
 * parent, the parent's skip target and the search-index watermark — never other messages, so the cost does not
 * depend on the session's length — then the message row (a duplicate id stops here: the unique index answers)
 * and the head. The search index takes the row with its batch (search-index.ts). A message over the engine's
 * value limit also writes its continuation rows (sql/engines/sqlite/chunks.ts).
 */
export function appendRow(
  driver: SqlDriver,
  sessionId: string,
  message: SessionMessage,
  request: AppendRequest,
): Appended {
  const { parentId, expectedLeafId, context } = request;
  const json = request.json ?? serializeMessage(message);
  const bytes = utf8Length(json);
  const tokens = estimateMessageTokens([message]);
  return driver.transaction(() => {
    // Sealed (an encrypted owner's) inside the transaction: the owner's key check is read and recorded in it.
    // No keyed hash for a sealed row: nothing compares with a new row's hash (sealing.ts storedForm).
    let form = storedForm(driver, sessionId, message.id, json, request.key, false);
    const ctx =
      context && typeof parentId === "string" && context.p_id === parentId
        ? context
        : readContext(driver, sessionId, parentId);
    const num = ctx ? ctx.num : createHead(driver, sessionId).num;
    if (expectedLeafId !== undefined) {
      const actual = ctx ? leafIdOf(driver, ctx, parentId) : null;
      if (actual !== expectedLeafId) {
        if (isDuplicate(driver, num, message.id)) return { result: { inserted: false } };
        throw new SessionError(
          "CONFLICT",
          `The latest leaf of session "${sessionId}" is ${JSON.stringify(actual)}, expected ${JSON.stringify(expectedLeafId)}`,
        );
      }
    }
    const parent = ctx && parentId !== null ? parentOf(ctx) : undefined;
    if (typeof parentId === "string" && !parent) {
      if (isDuplicate(driver, num, message.id)) return { result: { inserted: false } };
      throw new SessionError(
        "PARENT_NOT_FOUND",
        `Parent message "${parentId}" is not in session "${sessionId}"`,
      );
    }
    const jump = parent && ctx ? childJump(parent, jumpTargetOf(ctx, parent)) : null;
    const depth = parent ? parent.depth + 1 : 0;
    const now = new Date().toISOString();
    const insert = (sql: string, guard: readonly (string | null)[]) => {
      const stored = storedContent(driver, form.content);
      const row = driver.get<{ seq: number }>(sql, [
        num,
        message.id,
        parent ? parent.seq : null,
        message.role,
        stored.content,
        request.createdAt ?? ownTime(message) ?? now,
        depth,
        jump ? jump.seq : null,
        jump ? jump.depth : 0,
        bytes,
        (parent?.cum_bytes ?? 0) + bytes,
        tokens,
        (parent?.cum_tokens ?? 0) + tokens,
        stored.chunks,
        form.hash,
        ...guard,
      ]);
      if (row) writeChunks(driver, row.seq, stored);
      return row;
    };
    const { guard, clear } = request;
    const guarded = guard ? [guard.ownerHash, guard.check, sessionId, guard.owner] : [];
    let row = guard
      ? insert(INSERT_GUARDED, guarded)
      : clear
        ? insert(INSERT_CLEAR, [clear.ownerHash, sessionId, clear.owner])
        : insert(INSERT_MESSAGE, []);
    if (!row && clear && driver.keys) {
      // A duplicate id, or the owner got a key check since (another process), or the session another owner: read
      // both as a first write does (DECRYPT_FAILED without the owner's key), sealed anew when the keyring has it.
      driver.keys.unclear(sessionId);
      const key = driver.keys.keyFor(sessionId);
      if (key !== null || driver.keys.ownerOf(sessionId) !== clear.owner) {
        if (key !== null) refusePayloadPointer(sessionId, json);
        form = storedForm(driver, sessionId, message.id, json, key, false);
        row = insert(INSERT_MESSAGE, []);
      }
    }
    if (!row && guard && driver.keys) {
      // A duplicate id, or the check changed since (another process rotated or erased), or the session's owner (it
      // was deleted and created again under its id): read both, as a write does without a guard (DECRYPT_FAILED for
      // a key that is no longer the owner's, or none for the new owner), and seal anew under a new key or owner.
      driver.keys.stale(guard);
      const key = driver.keys.keyFor(sessionId);
      if (key !== form.key || driver.keys.ownerOf(sessionId) !== guard.owner) {
        form = storedForm(driver, sessionId, message.id, json, key, false);
        row = insert(INSERT_MESSAGE, []);
      }
    }
    if (!row) return { result: { inserted: false } };
    const sealed = form.key ? { key: form.key, content: form.content } : undefined;
    const indexed = afterInsert(
      driver,
      row.seq,
      num,
      message,
      ctx ? ctx.indexed_seq : indexedSeq(driver),
      sealed,
    );
    driver.run(
      "UPDATE agent_session_heads SET leaf_seq = ?, message_count = message_count + 1, updated_at = ? WHERE num = ?",
      [row.seq, now, num],
    );
    const { seq } = row;
    const child = (): AppendContext => {
      // The new row's jump target: none, its parent (whose fields the context has), or a row read by its key.
      const target = !jump || !parent ? null : jump.seq === parent.seq ? parent : nodeBySeq(driver, jump.seq);
      return {
        num,
        leaf_seq: seq,
        indexed_seq: indexed,
        p_id: message.id,
        p_seq: seq,
        p_depth: depth,
        p_jump_seq: jump ? jump.seq : null,
        p_jump_depth: jump ? jump.depth : 0,
        p_cum_bytes: (parent?.cum_bytes ?? 0) + bytes,
        p_cum_tokens: (parent?.cum_tokens ?? 0) + tokens,
        t_seq: target ? target.seq : null,
        t_jump_seq: target ? target.jump_seq : null,
        t_jump_depth: target ? target.jump_depth : 0,
      };
    };
    return { result: { inserted: true }, seq, child };
  });
}
