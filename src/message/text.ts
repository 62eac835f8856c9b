// A message's searchable text: what full-text search indexes and what a hit shows, one rule for every backend.
import type { SessionMessage } from "../contract/message.js";

/**
 * The searchable text of a stored message's JSON ("" when it is not a message): a search hit needs no more, so
 * the message is not revived (its `createdAt` stays a string: a Date per hit was ~a sixth of reading 20 hits).
 */
export function storedMessageText(json: string): string {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return "";
  }
  const parts = (value as { parts?: unknown } | null)?.parts;
  return Array.isArray(parts) ? messageText(value as SessionMessage) : "";
}

/** The searchable text of a message: its `text` parts joined by newlines. */
export function messageText(message: SessionMessage): string {
  const texts: string[] = [];
  for (const part of message.parts) {
    if (part && part.type === "text" && typeof part.text === "string" && part.text.length > 0) {
      texts.push(part.text);
    }
  }
  return texts.join("\n");
}
