import { clipHit } from "../context/output.js";
import type { SessionMessage } from "../contract/message.js";
import { isCompactionMessage } from "../message/overlay.js";
import { messageText } from "../message/text.js";

// Room kept for a marker at the end of a bounded listing, so the listing and its marker fit the limit together.
const MARKER_ROOM = 300;

/**
 * One message as a tool shows it: a header line (id, role, stored time, and what it is when it is a summary),
 * then its text within `maxChars` (a longer one is cut with a marker), then its other parts named by type.
 */
export function messageBlock(message: SessionMessage, maxChars: number, mark = "", note = ""): string {
  const created = message.createdAt instanceof Date ? ` ${message.createdAt.toISOString()}` : "";
  const summary = isCompactionMessage(message) ? " (summary standing for compacted messages)" : "";
  const header = `${mark}[${message.role}] message=${JSON.stringify(message.id)}${created}${summary}${note}`;
  const others = message.parts.filter((part) => part?.type !== "text").map((part) => part?.type ?? "?");
  const text = messageText(message);
  return [
    header,
    ...(text.length > 0 ? [clipHit(text, "", maxChars)] : []),
    ...(others.length > 0 ? [`(other parts: ${others.join(", ")})`] : []),
  ].join("\n");
}

/**
 * Blocks joined by blank lines within `max` characters: whole blocks while they fit, then `marker(shown)` naming
 * how to read on. The first block always shows (it is at most a hit's length plus its marker).
 */
export function boundedBlocks(
  blocks: readonly string[],
  max: number,
  marker: (shown: number) => string | null,
): string {
  let out = "";
  let shown = 0;
  for (const block of blocks) {
    const next = shown === 0 ? block : `${out}\n\n${block}`;
    if (shown > 0 && next.length > max - MARKER_ROOM) break;
    out = next;
    shown++;
  }
  const note = marker(shown);
  return note === null ? out : `${out}\n\n${note}`;
}
