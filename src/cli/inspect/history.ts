import type { CompactionDetails, SessionMessage } from "../../contract/message.js";
import type { SessionStore } from "../../contract/store.js";
import { hasTransfer } from "../../contract/transfer.js";
import { COMPACTION_PREFIX, isCompactionMessage } from "../../message/overlay.js";
import { messageText } from "../../message/text.js";
import { CliError } from "../errors.js";
import { loadTree, pathTo, type SessionTree } from "./tree.js";

/** One message of a history as shown: an original message, or an overlay with the messages it replaces. */
export interface HistoryEntry {
  id: string;
  role: string;
  createdAt: string | null;
  text: string;
  message: SessionMessage;
  overlay: {
    compactionId: string;
    fromMessageId: string;
    toMessageId: string;
    details: CompactionDetails | null;
    /** The stored messages the summary stands for; null when the store cannot list them. */
    covered: HistoryEntry[] | null;
  } | null;
}

/** A branch of a session read for display. */
export interface HistoryView {
  sessionId: string;
  leafId: string | null;
  raw: boolean;
  entries: HistoryEntry[];
}

// The storage time when known (the tree has it); else the message's own `createdAt`, if it carries one.
function entry(message: SessionMessage, storedAt: string | null = null): HistoryEntry {
  const created = storedAt ?? (message.createdAt instanceof Date ? message.createdAt.toISOString() : null);
  return {
    id: message.id,
    role: message.role,
    createdAt: created,
    text: messageText(message),
    message,
    overlay: null,
  };
}

/**
 * The path to `leafId` (default: the latest leaf). Default: as the model sees it, overlays applied and each one
 * expandable to its originals; `raw`: the stored messages without overlays. An unknown leaf is `NOT_FOUND`.
 */
export async function readHistory(
  store: SessionStore,
  sessionId: string,
  options: { leafId?: string | undefined; raw?: boolean; tree?: SessionTree } = {},
): Promise<HistoryView> {
  const provider = store.session(sessionId);
  let leafId = options.leafId ?? null;
  if (leafId !== null && !(await provider.getMessage(leafId))) {
    throw new CliError(
      `message ${JSON.stringify(leafId)} is not in session ${JSON.stringify(sessionId)}`,
      "NOT_FOUND",
    );
  }
  leafId ??= (await provider.getLatestLeaf())?.id ?? null;
  let tree = options.tree;
  const needTree = async (): Promise<SessionTree | null> => {
    if (!tree && hasTransfer(store)) tree = await loadTree(store, sessionId);
    return tree ?? null;
  };
  if (options.raw) {
    const loaded = await needTree();
    if (!loaded)
      throw new CliError(`--raw needs session export support, which the ${store.backend} store lacks`);
    const entries = pathTo(loaded, leafId).flatMap((node) =>
      node.message ? [entry(node.message, node.createdAt)] : [],
    );
    return { sessionId, leafId, raw: true, entries };
  }
  const history = await provider.getHistory(leafId);
  const compactions = history.some(isCompactionMessage) ? await provider.getCompactions() : [];
  const loaded = await needTree();
  const rawPath = loaded ? pathTo(loaded, leafId) : null;
  const entries = history.map((message) => {
    if (!isCompactionMessage(message))
      return entry(message, loaded?.nodes.get(message.id)?.createdAt ?? null);
    const compactionId = message.id.slice(COMPACTION_PREFIX.length);
    const compaction = compactions.find((c) => c.id === compactionId);
    const view = entry(message, compaction?.createdAt ?? null);
    if (!compaction) return view;
    const from = rawPath?.findIndex((node) => node.id === compaction.fromMessageId) ?? -1;
    const to = rawPath?.findIndex((node) => node.id === compaction.toMessageId) ?? -1;
    const covered =
      rawPath && from >= 0 && to >= from
        ? rawPath
            .slice(from, to + 1)
            .flatMap((node) => (node.message ? [entry(node.message, node.createdAt)] : []))
        : null;
    view.overlay = {
      compactionId,
      fromMessageId: compaction.fromMessageId,
      toMessageId: compaction.toMessageId,
      details: compaction.details ?? null,
      covered,
    };
    return view;
  });
  return { sessionId, leafId, raw: false, entries };
}
