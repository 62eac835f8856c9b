import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import type { DeleteTip } from "../contract/provider.js";
import { SessionError } from "../errors.js";
import { messageText } from "../message/text.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { utf8Length } from "../runtime/bytes.js";
import { blindTokensOf } from "../search/blind-tokens.js";
import {
  deleteChunks,
  deleteSessionChunks,
  storedContent,
  writeChunks,
} from "../sql/engines/sqlite/chunks.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { type NodeRow, nodeById, nodeBySeq, rebuildSubtree } from "../sql/engines/sqlite/tree.js";
import { forgetMessages } from "../sql/facts/sqlite-engine.js";
import { releaseSession } from "../sql/media/sqlite.js";
import {
  type SealKey,
  type StoredForm,
  storedForm,
  storedSummary,
  storesSame,
} from "../sql/sealing/sqlite.js";
import { indexedSeq, indexText, unindexMessage, unindexSession } from "../sql/search/sqlite-indexing.js";
import { encode } from "../store/crypto/row-codec.js";
import type { RowWritten } from "../store/written.js";
import { appendRow } from "./append.js";

interface Head {
  num: number;
  leaf_seq: number | null;
}

type StoredNode = NodeRow & { chunks: number; content_hash: string | null };

const STORED_NODE = `SELECT seq, parent_seq, depth, jump_seq, jump_depth, bytes, cum_bytes, tokens, cum_tokens, chunks,
  content_hash FROM agent_messages WHERE session_num = ? AND id = ?`;

/**
 * Rewrites a stored message; role, search index and running totals follow the new content. Content whose hash
 * equals the stored one is not written at all (`updated: false`); nothing but the row's hash is compared, except
 * for a sealed row appended without one, which is opened (sealing.ts storesSame).
 * `json` is the message's JSON; `key`: the key to seal with, when the caller checked it (sealing.ts SealKey).
 */
export function updateRow(
  driver: SqlDriver,
  sessionId: string,
  message: SessionMessage,
  json: string,
  key?: SealKey,
): RowWritten<{ updated: boolean }> {
  return driver.transaction(() => {
    const head = driver.get<Head>("SELECT num, leaf_seq FROM agent_session_heads WHERE session_id = ?", [
      sessionId,
    ]);
    const node = head ? driver.get<StoredNode>(STORED_NODE, [head.num, message.id]) : undefined;
    if (!head || !node) {
      throw new SessionError("NOT_FOUND", `Message "${message.id}" is not in session "${sessionId}"`);
    }
    const form = storedForm(driver, sessionId, message.id, json, key);
    if (storesSame(driver, sessionId, message.id, node, json, form)) return { result: { updated: false } };
    rewrite(driver, head.num, node, message, json, form);
    return { result: { updated: true }, seq: node.seq };
  });
}

/**
 * Inserts the message, or replaces the stored one with its id (its place in the tree stays), in one transaction
 * (`key` as {@link updateRow}'s).
 */
export function upsertRow(
  driver: SqlDriver,
  sessionId: string,
  message: SessionMessage,
  parentId: string | null | undefined,
  json: string,
  key?: SealKey,
): RowWritten<{ inserted: boolean; updated: boolean }> {
  return driver.transaction(() => {
    const head = driver.get<Head>("SELECT num, leaf_seq FROM agent_session_heads WHERE session_id = ?", [
      sessionId,
    ]);
    const node = head ? driver.get<StoredNode>(STORED_NODE, [head.num, message.id]) : undefined;
    if (!head || !node) {
      const { result, seq } = appendRow(driver, sessionId, message, { parentId, json, key });
      return { result: { inserted: result.inserted, updated: false }, seq };
    }
    const form = storedForm(driver, sessionId, message.id, json, key);
    if (storesSame(driver, sessionId, message.id, node, json, form)) {
      return { result: { inserted: false, updated: false } };
    }
    rewrite(driver, head.num, node, message, json, form);
    return { result: { inserted: false, updated: true }, seq: node.seq };
  });
}

function rewrite(
  driver: SqlDriver,
  sessionNum: number,
  node: StoredNode,
  message: SessionMessage,
  json: string,
  form: StoredForm,
): void {
  const bytes = utf8Length(json);
  const tokens = estimateMessageTokens([message]);
  const stored = storedContent(driver, form.content);
  const hash = form.hash;
  if (node.chunks > 0) deleteChunks(driver, node.seq);
  driver.run(
    "UPDATE agent_messages SET content = ?, role = ?, bytes = ?, tokens = ?, chunks = ?, content_hash = ? WHERE seq = ?",
    [stored.content, message.role, bytes, tokens, stored.chunks, hash, node.seq],
  );
  writeChunks(driver, node.seq, stored);
  const byteDelta = bytes - node.bytes;
  const tokenDelta = tokens - node.tokens;
  if (byteDelta !== 0 || tokenDelta !== 0) {
    // Running totals of the message and everything below it shift by the same delta: O(subtree), usually 1 row.
    driver.run(
      `WITH RECURSIVE sub(seq) AS (
         SELECT ? UNION ALL SELECT m.seq FROM agent_messages m JOIN sub ON m.parent_seq = sub.seq
       ) UPDATE agent_messages SET cum_bytes = cum_bytes + ?, cum_tokens = cum_tokens + ?
         WHERE seq IN (SELECT seq FROM sub)`,
      [node.seq, byteDelta, tokenDelta],
    );
  }
  // An indexed message is re-indexed now; a pending one is indexed from its new content with its batch.
  if (node.seq <= indexedSeq(driver)) {
    driver.run("DELETE FROM agent_messages_fts WHERE rowid = ?", [node.seq]);
    // Sealed content goes in as its owner's blind tokens (search/indexing.ts afterInsert).
    const blind = form.key ? blindTokensOf(form.key) : null;
    indexText(driver, node.seq, sessionNum, messageText(message), true, undefined, blind);
  }
  driver.run("UPDATE agent_session_heads SET updated_at = ? WHERE num = ?", [
    new Date().toISOString(),
    sessionNum,
  ]);
}

/**
 * Deletes messages and splices: each deleted message's children move up to its parent, so the rest of the
 * conversation stays on its path. Overlays ending or starting at a deleted message are dropped. A deleted tip
 * gives way to its nearest surviving ancestor (none: an empty path), then, unless `tip` is "ancestor", to the
 * newest leaf below it, never to a leaf outside that ancestor's subtree (contract/provider.ts DeleteTip).
 */
export function deleteRows(
  driver: SqlDriver,
  sessionId: string,
  ids: readonly string[],
  tip: DeleteTip = "newest-leaf",
): void {
  driver.transaction(() => {
    const head = driver.get<Head>("SELECT num, leaf_seq FROM agent_session_heads WHERE session_id = ?", [
      sessionId,
    ]);
    if (!head) return;
    const moved = new Set<number>();
    const deleted: string[] = [];
    let leaf = head.leaf_seq;
    for (const id of new Set(ids)) {
      const node = nodeById(driver, head.num, id);
      if (!node) continue;
      for (const child of driver.all<{ seq: number }>("SELECT seq FROM agent_messages WHERE parent_seq = ?", [
        node.seq,
      ])) {
        moved.add(child.seq);
      }
      driver.run("UPDATE agent_messages SET parent_seq = ? WHERE parent_seq = ?", [
        node.parent_seq,
        node.seq,
      ]);
      unindexMessage(driver, node.seq);
      deleteChunks(driver, node.seq);
      driver.run("DELETE FROM agent_messages WHERE seq = ?", [node.seq]);
      moved.delete(node.seq);
      deleted.push(id);
      // The tip moves up to the parent, never to another branch (an ancestor deleted later moves it up again;
      // one deleted earlier already re-parented this row, so parent_seq is the survivor).
      if (node.seq === leaf) leaf = node.parent_seq;
    }
    if (deleted.length === 0) return;
    if (tip === "newest-leaf" && leaf !== head.leaf_seq && leaf !== null)
      leaf = newestLeafBelow(driver, leaf);
    forgetMessages(driver, sessionId, deleted); // their facts' sources; a fact left with none goes
    // Shallowest first, so a subtree rebuilt as part of a larger one is not rebuilt twice.
    const roots = [...moved]
      .map((seq) => nodeBySeq(driver, seq))
      .filter((n): n is NodeRow => n !== undefined)
      .sort((a, b) => a.depth - b.depth);
    const rebuilt = new Set<number>();
    for (const root of roots) if (!rebuilt.has(root.seq)) rebuildSubtree(driver, root.seq, rebuilt);
    const list = JSON.stringify(deleted);
    driver.run(
      `DELETE FROM agent_compactions WHERE session_num = ?
         AND (from_message_id IN (SELECT value FROM json_each(?)) OR to_message_id IN (SELECT value FROM json_each(?)))`,
      [head.num, list, list],
    );
    driver.run(
      "UPDATE agent_session_heads SET leaf_seq = ?, message_count = message_count - ?, updated_at = ? WHERE num = ?",
      [leaf, deleted.length, new Date().toISOString(), head.num],
    );
  });
}

// O(the ancestor's subtree), paid only when a delete takes the tip: usually the deleted answer's siblings.
const NEWEST_LEAF_BELOW = `WITH RECURSIVE sub(seq) AS (
    SELECT ? UNION ALL SELECT m.seq FROM agent_messages m JOIN sub ON m.parent_seq = sub.seq
  ) SELECT max(s.seq) AS seq FROM sub s WHERE NOT EXISTS (SELECT 1 FROM agent_messages c WHERE c.parent_seq = s.seq)`;

/** The newest childless row of `top`'s subtree (`top` itself when it has no children). */
function newestLeafBelow(driver: SqlDriver, top: number): number {
  return driver.get<{ seq: number | null }>(NEWEST_LEAF_BELOW, [top])?.seq ?? top;
}

/**
 * Deletes every message and overlay of session `num` and empties its head (inside the caller's transaction); the
 * facts' sources in its messages go, and a fact left with none.
 */
export function clearRows(driver: SqlDriver, num: number, sessionId: string): void {
  deleteSessionContent(driver, num);
  forgetMessages(driver, sessionId, null);
  driver.run(
    "UPDATE agent_session_heads SET leaf_seq = NULL, message_count = 0, updated_at = ? WHERE num = ?",
    [new Date().toISOString(), num],
  );
}

/**
 * Deletes every message of session `num` with what hangs on it (index rows, chunks, payload links) and its
 * overlays, inside the caller's transaction; the head row is left to the caller (clear keeps it, delete drops it).
 */
export function deleteSessionContent(driver: SqlDriver, num: number): void {
  // The FTS table is contentless: its rows are found by rowid (= message seq) before the messages go.
  unindexSession(driver, num);
  deleteSessionChunks(driver, num);
  releaseSession(driver, num);
  driver.run("DELETE FROM agent_messages WHERE session_num = ?", [num]);
  driver.run("DELETE FROM agent_compactions WHERE session_num = ?", [num]);
}

/**
 * Stores an overlay of session `num` (inside the caller's transaction); answers its summary as sealed for an
 * encrypted owner (what the change log records), else null.
 */
export function insertCompaction(
  driver: SqlDriver,
  sessionId: string,
  num: number,
  compaction: StoredCompaction,
): string | null {
  const values = (summary: string | Uint8Array) => [
    num,
    compaction.id,
    summary,
    compaction.fromMessageId,
    compaction.toMessageId,
    compaction.details ? JSON.stringify(compaction.details) : null,
    compaction.createdAt,
  ];
  // Sealed under a check this store verified before, unread: inserted only while it is still the recorded one and
  // the session still the owner's (append.ts INSERT_GUARDED); refused, the check and the owner are read as a write
  // without a guard reads them.
  const known = driver.keys?.knownWriteKey(sessionId);
  if (known) {
    const sealed = encode("overlay", known.key, { sessionId, id: compaction.id }, compaction.summary);
    const { ownerHash, check, owner } = known.guard;
    const params = [...values(sealed), ownerHash, check, sessionId, owner];
    // Counted by the driver where it can: a RETURNING clause made the sealed overlay's insert ~5 µs slower (the
    // overlay row measured 1.73-1.83× clear with it, 1.57-1.69× with the count; PRIVACY.md, "Measured").
    const inserted = driver.runChanges
      ? driver.runChanges(GUARDED_OVERLAY, params) > 0
      : driver.get(`${GUARDED_OVERLAY} RETURNING 1 AS ok`, params) !== undefined;
    if (inserted) return sealed;
    driver.keys!.stale(known.guard);
  }
  const summary = storedSummary(driver, sessionId, compaction.id, compaction.summary);
  driver.run(`${INSERT_OVERLAY} VALUES (?, ?, ?, ?, ?, ?, ?)`, values(summary.value));
  return summary.sealed;
}

const INSERT_OVERLAY =
  "INSERT INTO agent_compactions (session_num, id, summary, from_message_id, to_message_id, details, created_at)";
// Parameters: the seven columns, then the owner hash and check the insert requires to be still recorded, and the
// session id and the owner it requires the session to be still registered with.
const GUARDED_OVERLAY = `${INSERT_OVERLAY} SELECT ?, ?, ?, ?, ?, ?, ?
  WHERE EXISTS (SELECT 1 FROM agent_owner_keys WHERE owner_hash = ? AND key_check = ?)
    AND EXISTS (SELECT 1 FROM agent_sessions WHERE id = ? AND owner = ?)`;
