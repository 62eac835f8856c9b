import { SessionError } from "../errors.js";
import { messageText, serializeMessage, utf8Length } from "../message.js";
import type { SessionMessage } from "../types.js";
import { estimateMessageTokens } from "../utils/tokens.js";
import type { SqlDriver } from "./driver.js";
import { indexedSeq, indexText, unindexMessage } from "./search-index.js";
import { type NodeRow, nodeById, nodeBySeq, rebuildSubtree } from "./tree.js";

interface Head {
  num: number;
  leaf_seq: number | null;
}

/** Rewrites a stored message; role, search index and running totals follow the new content. */
export function updateRow(
  driver: SqlDriver,
  sessionId: string,
  message: SessionMessage,
  content: string = serializeMessage(message),
): void {
  const text = messageText(message);
  const bytes = utf8Length(content);
  const tokens = estimateMessageTokens([message]);
  driver.transaction(() => {
    const head = driver.get<Head>("SELECT num, leaf_seq FROM agent_session_heads WHERE session_id = ?", [
      sessionId,
    ]);
    const node = head ? nodeById(driver, head.num, message.id) : undefined;
    if (!head || !node) {
      throw new SessionError("NOT_FOUND", `Message "${message.id}" is not in session "${sessionId}"`);
    }
    driver.run("UPDATE agent_messages SET content = ?, role = ?, bytes = ?, tokens = ? WHERE seq = ?", [
      content,
      message.role,
      bytes,
      tokens,
      node.seq,
    ]);
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
      indexText(driver, node.seq, head.num, text);
    }
    driver.run("UPDATE agent_session_heads SET updated_at = ? WHERE num = ?", [
      new Date().toISOString(),
      head.num,
    ]);
  });
}

/**
 * Deletes messages and splices: each deleted message's children move up to its parent, so the rest of the
 * conversation stays on its path. Overlays ending or starting at a deleted message are dropped.
 */
export function deleteRows(driver: SqlDriver, sessionId: string, ids: readonly string[]): void {
  driver.transaction(() => {
    const head = driver.get<Head>("SELECT num, leaf_seq FROM agent_session_heads WHERE session_id = ?", [
      sessionId,
    ]);
    if (!head) return;
    const moved = new Set<number>();
    const deleted: string[] = [];
    let leafGone = false;
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
      driver.run("DELETE FROM agent_messages WHERE seq = ?", [node.seq]);
      moved.delete(node.seq);
      deleted.push(id);
      if (node.seq === head.leaf_seq) leafGone = true;
    }
    if (deleted.length === 0) return;
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
    const leaf = leafGone ? newestLeaf(driver, head.num) : head.leaf_seq;
    driver.run(
      "UPDATE agent_session_heads SET leaf_seq = ?, message_count = message_count - ?, updated_at = ? WHERE num = ?",
      [leaf, deleted.length, new Date().toISOString(), head.num],
    );
  });
}

// Runs only when the tip itself was deleted; scans the session once, as the reference does.
function newestLeaf(driver: SqlDriver, sessionNum: number): number | null {
  const row = driver.get<{ seq: number | null }>(
    `SELECT MAX(m.seq) AS seq FROM agent_messages m WHERE m.session_num = ?
       AND NOT EXISTS (SELECT 1 FROM agent_messages c WHERE c.parent_seq = m.seq)`,
    [sessionNum],
  );
  return row?.seq ?? null;
}
