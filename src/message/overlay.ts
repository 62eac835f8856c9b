// The compaction overlay as a message: the synthetic assistant message a read shows in place of a compacted
// range, and how its reserved id prefix is recognised (reads, echoes from chat clients, refused writes).
import type { SessionMessage, StoredCompaction } from "../contract/message.js";

/** Ids with this prefix name synthetic compaction overlays and are never stored as messages. */
export const COMPACTION_PREFIX = "compaction_";

/** True for the synthetic message that stands in for a compacted range. */
export function isCompactionMessage(message: { id: string }): boolean {
  return typeof message.id === "string" && message.id.startsWith(COMPACTION_PREFIX);
}

/**
 * True for an overlay message a client echoed back (chat clients post their whole transcript, overlay included):
 * appends and upserts store nothing for it and raise no error.
 */
export function isEchoedOverlay(message: SessionMessage): boolean {
  return message.id.startsWith(COMPACTION_PREFIX);
}

/** The synthetic assistant message that replaces a compacted range on read. */
export function overlayMessage(compaction: StoredCompaction): SessionMessage {
  return {
    id: `${COMPACTION_PREFIX}${compaction.id}`,
    role: "assistant",
    parts: [{ type: "text", text: compaction.summary }],
    createdAt: new Date(compaction.createdAt),
  };
}
