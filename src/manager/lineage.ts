/**
 * Sessions derived from another (`SessionManager.fork` and `compactAndSplit`): registered with copies of the
 * source's history and auto-wired blocks, and removed again when copying fails.
 */

import type { SessionMessage } from "../contract/message.js";
import type { NewSessionRecord, SessionInfo } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { assertId } from "../message/ids.js";
import { emitWarning } from "../runtime/warn.js";
import type { Session } from "../session/session.js";
import { copyBlocks, copyMessages, sessionBlockKeys } from "./copy.js";
import { parseName } from "./input.js";
import { found, type ManagerState, ownedLabels, requireSession } from "./state.js";

/** The text of the message `compactAndSplit` starts a continuation with, as in the reference. */
export function continuationText(summary: string): string {
  return `[Context from previous session]\n\n${summary}`;
}

/** `SessionManager.fork`: a new session with the history up to `atMessageId` (`NOT_FOUND` when not in it). */
export async function forkSession<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionOf: () => Session<M>,
  sessionId: string,
  atMessageId: string,
  name: string,
): Promise<SessionInfo> {
  const from = await requireSession(state, sessionId);
  assertId(atMessageId, "atMessageId", "atMessageId");
  parseName(name);
  const source = sessionOf();
  if (!(await source.getMessage(atMessageId))) {
    throw new SessionError("NOT_FOUND", `Message "${atMessageId}" is not in session "${sessionId}"`);
  }
  const history = await source.getHistory(atMessageId);
  const record = { id: crypto.randomUUID(), name, parentSessionId: sessionId, ...ownerOf(from) };
  return derive(state, sessionId, record, history);
}

/** `SessionManager.compactAndSplit`: ends the session and starts its continuation with one summary message. */
export async function continueSession<M extends SessionMessage>(
  state: ManagerState<M>,
  sessionId: string,
  summary: string,
  name: string | undefined,
): Promise<SessionInfo> {
  const old = await requireSession(state, sessionId);
  if (typeof summary !== "string") {
    throw new SessionError("INVALID_ARGUMENT", `A summary must be a string, got ${typeof summary}`, {
      issues: [{ path: "summary", rule: summary === undefined ? "required" : "type" }],
    });
  }
  if (name !== undefined) parseName(name);
  const message: SessionMessage = {
    id: crypto.randomUUID(),
    role: "assistant",
    parts: [{ type: "text", text: continuationText(summary) }],
  };
  const record = {
    id: crypto.randomUUID(),
    name: name ?? old.name,
    parentSessionId: sessionId,
    ...modelOf(old),
    ...ownerOf(old),
  };
  const info = await derive(state, sessionId, record, [message]);
  const { registry } = state.store;
  found(sessionId, await registry.markEnded(sessionId, "compaction"));
  // Ending the old session bumped it; the continuation is the newest activity.
  await registry.touch(info.id);
  return found(info.id, await registry.get(info.id));
}

/** Registers a session derived from `fromId` with `messages` and its blocks; removes it again on failure. */
async function derive<M extends SessionMessage>(
  state: ManagerState<M>,
  fromId: string,
  record: NewSessionRecord,
  messages: readonly SessionMessage[],
): Promise<SessionInfo> {
  const { store } = state;
  const labels = ownedLabels(state, fromId);
  const info = await store.registry.create(record);
  try {
    await copyMessages(store, info.id, messages);
    await copyBlocks(store, labels, fromId, info.id);
    await store.registry.touch(info.id);
  } catch (error) {
    // The original failure is the answer; a failed clean-up is reported beside it, never dropped.
    await store.registry
      .delete(info.id, { blockKeys: sessionBlockKeys(labels, info.id) })
      .catch((cleanup: unknown) =>
        emitWarning(
          cleanup,
          "AgentSessionManagerWarning",
          `session ${JSON.stringify(info.id)} was left registered`,
        ),
      );
    throw error;
  }
  return found(info.id, await store.registry.get(info.id));
}

function modelOf(info: SessionInfo): { model: string | null; source: string | null } {
  return { model: info.model, source: info.source };
}

/** A derived session is its source's owner's: a fork never moves a conversation to another owner (or to none). */
function ownerOf(info: SessionInfo): { owner?: string } {
  return info.owner === undefined ? {} : { owner: info.owner };
}
