/**
 * The names the eve door gives what it stores (docs/EVE.md, "What maps to what"): one agent-session session per eve
 * session and memory scope, registered for the scope's owner, with a `source` that names the scope and the eve
 * session by digests only (eve's scope key is already opaque; the eve session id is not kept in clear), and message
 * ids derived from the eve session and the message, so a retried capture names the rows it already wrote.
 */
import { sha256Hex, utf8Encode } from "../runtime/bytes.js";

const digest = (...parts: string[]): string => sha256Hex(utf8Encode(parts.join("\u0000")));

/** The prefix of every registry `source` the door writes. */
export const SOURCE_PREFIX = "eve:";

/** The session that holds what eve session `eveSessionId` captured in the scope `scopeKey`. */
export function sessionIdOf(scopeKey: string, eveSessionId: string): string {
  return `eve-${digest("session", scopeKey, eveSessionId).slice(0, 40)}`;
}

/** The digest of an eve session id, as the registry `source` of its sessions ends with it. */
export function eveSessionTag(eveSessionId: string): string {
  return digest("eve-session", eveSessionId).slice(0, 24);
}

/** The digest of a scope key, as the registry `source` of its sessions starts with it. */
export function scopeTag(scopeKey: string): string {
  return digest("scope", scopeKey).slice(0, 24);
}

/** The registry `source` of the session of `scopeKey` and `eveSessionId`: `eve:<scope digest>:<session digest>`. */
export function sourceOf(scopeKey: string, eveSessionId: string): string {
  return `${SOURCE_PREFIX}${scopeTag(scopeKey)}:${eveSessionTag(eveSessionId)}`;
}

/**
 * The id of a captured message: the eve session's digest with the message's role, content and how many identical
 * messages came before it in the same capture, so capturing the same history again (a retry, a process restart,
 * the turn's completion after a compaction captured its start) names the same rows.
 */
export function capturedId(eveSessionId: string, canonical: string, occurrence: number): string {
  return `eve-${digest("message", eveSessionId, canonical, String(occurrence)).slice(0, 32)}`;
}

/** The prefix of the note messages `remember` writes. */
export const NOTE_PREFIX = "eve-note-";

/** The id of the note message a `remember` tool call writes (the same text remembered twice is one note). */
export function noteId(text: string): string {
  return `${NOTE_PREFIX}${digest("note", text).slice(0, 32)}`;
}
