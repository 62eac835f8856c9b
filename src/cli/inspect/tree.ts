import type { SessionMessage, StoredCompaction } from "../../contract/message.js";
import type { SessionStore } from "../../contract/store.js";
import { parseMessage } from "../../message/json.js";
import { messageText } from "../../message/text.js";
import { requireTransfer } from "./sessions.js";

/** One stored message in its session's tree. */
export interface TreeNode {
  id: string;
  parentId: string | null;
  role: string;
  createdAt: string;
  /** The stored message (null when its row no longer parses). */
  message: SessionMessage | null;
  /** The searchable text (text parts joined by newlines). */
  text: string;
  /** Child ids in storage order (the order `getBranches` returns). */
  children: string[];
}

/** The whole branch structure of one session, as stored: every message, every overlay and the latest leaf. */
export interface SessionTree {
  sessionId: string;
  leafId: string | null;
  nodes: Map<string, TreeNode>;
  roots: string[];
  compactions: StoredCompaction[];
}

/**
 * Reads one session's tree through the store's transfer stream. This holds the one session in memory (the tree
 * is drawn whole); the rest of the store is never read.
 */
export async function loadTree(store: SessionStore, sessionId: string): Promise<SessionTree> {
  requireTransfer(store, "reading a session's tree");
  const tree: SessionTree = { sessionId, leafId: null, nodes: new Map(), roots: [], compactions: [] };
  for await (const item of store.transfer.exportSession(sessionId)) {
    if (item.kind === "session") tree.leafId = item.session.leafId;
    else if (item.kind === "compaction") tree.compactions.push(item.compaction);
    else if (item.kind === "message") {
      const { id, parentId, role, createdAt, content } = item.message;
      const message = parseMessage(content);
      tree.nodes.set(id, {
        id,
        parentId,
        role,
        createdAt,
        message,
        text: message ? messageText(message) : "",
        children: [],
      });
      const parent = parentId === null ? undefined : tree.nodes.get(parentId);
      if (parent) parent.children.push(id);
      else tree.roots.push(id);
    }
  }
  return tree;
}

/** The stored path from a root to `leafId`, root first (no overlays applied); empty for an unknown id. */
export function pathTo(tree: SessionTree, leafId: string | null): TreeNode[] {
  const path: TreeNode[] = [];
  for (let node = leafId === null ? undefined : tree.nodes.get(leafId); node; ) {
    path.push(node);
    node = node.parentId === null ? undefined : tree.nodes.get(node.parentId);
  }
  return path.reverse();
}

/** Ids on the active path (root to the latest leaf). */
export function activeIds(tree: SessionTree): Set<string> {
  return new Set(pathTo(tree, tree.leafId).map((node) => node.id));
}

/** Every leaf (a message without children), in storage order. */
export function leafIds(tree: SessionTree): string[] {
  return [...tree.nodes.values()].filter((node) => node.children.length === 0).map((node) => node.id);
}
