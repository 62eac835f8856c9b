/**
 * Capture at turn completion and before compaction (docs/EVE.md, "Capture"): the messages of eve's projected
 * history that the eve session's session does not hold yet are appended after its latest message, in one step of
 * the store. Ids are derived from the eve session and each message (ids.ts), so a retried operation (the same
 * `operationId`, in this process or after a restart) and the turn's completion after a compaction captured its start
 * find their rows already there and store nothing twice; the operation id rides in each new message's metadata.
 */
import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { emitWarning } from "../runtime/warn.js";
import type { Session } from "../session/session.js";
import { ContentIds } from "./ids.js";
import { CAPTURED_KEY, capturedMessages, type EveMessage } from "./messages.js";
import { openSession, type Place } from "./scope.js";

/** The metadata key of the eve operation that stored a message. */
export const OPERATION_KEY = "eveOperationId";

/** A captured message's key-independent name (undefined for a message that has none: a note, or older rows). */
const tagOf = (message: SessionMessage): string | undefined => {
  const tag = (message.metadata as Record<string, unknown> | undefined)?.[CAPTURED_KEY];
  return typeof tag === "string" ? tag : undefined;
};

/** True when `held` names `message`: by its id under the owner's key now, or by its key-independent name. */
const isHeld = (held: ReadonlySet<string>, message: SessionMessage): boolean =>
  held.has(message.id) || held.has(tagOf(message) as string);

/**
 * The ids and key-independent names the session holds, read newest first until the oldest message of eve's history
 * (`oldest`) is among them: what is older was captured before eve's context began (a compaction's checkpoint), so a
 * capture reads about as much as eve passed it, not the whole session (the whole session once, when `oldest` is not
 * stored yet). The names find what a capture stored before a key rotation changed the owner's ids.
 */
async function heldIds(session: Session, oldest: SessionMessage): Promise<Set<string>> {
  const held = new Set<string>();
  for await (const batch of session.historyBatches({ newestFirst: true, batchSize: 100 })) {
    for (const message of batch) {
      held.add(message.id);
      const tag = tagOf(message);
      if (tag !== undefined) held.add(tag);
    }
    if (isHeld(held, oldest)) break;
  }
  return held;
}

/** Appends `messages` one by one, skipping an id stored meanwhile and one the store refuses as too large. */
async function appendEach(session: Session, messages: readonly SessionMessage[]): Promise<void> {
  for (const message of messages) {
    try {
      await session.appendMessage(message);
    } catch (error) {
      if (!(error instanceof SessionError)) throw error;
      if (error.code === "CONFLICT") continue;
      if (error.code !== "TOO_LARGE") throw error;
      emitWarning(error, "AgentSessionEveWarning", `eve message "${message.id}" is not captured`);
    }
  }
}

/** Captures `history` for the place's eve session (see the file's comment); answers how many messages were new. */
export async function captureAt(
  place: Place,
  history: readonly EveMessage[],
  operationId: string,
): Promise<number> {
  const session = await openSession(place);
  const ids = await ContentIds.of(place.store, place.owner);
  const all = capturedMessages(ids, place.eveSessionId, history);
  if (all.length === 0) return 0;
  const held = await heldIds(session, all[0] as SessionMessage);
  const fresh = all
    .filter((m) => !isHeld(held, m))
    .map((m) => ({ ...m, metadata: { ...(m.metadata as object), [OPERATION_KEY]: operationId } }));
  if (fresh.length === 0) return 0;
  try {
    await session.appendMessages(fresh);
  } catch (error) {
    // Another capture of the same history stored some of them meanwhile, or one is over the row limit: one by one.
    if (!(error instanceof SessionError && (error.code === "CONFLICT" || error.code === "TOO_LARGE")))
      throw error;
    await appendEach(session, fresh);
  }
  return fresh.length;
}
