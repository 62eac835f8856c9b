/**
 * Learning facts from chat turns (`persistChatTurn(…, { learn })`, `sessionMemory({ learn })`; docs/FACTS.md,
 * "Doors"): once a turn is stored, the session's messages not learned yet are learned in the background, as the
 * agent runtime learns its turns (`TurnLearner`, src/facts/turn-learner.ts), never on the request's path. One learner per
 * store and session at a time in a process: the requests of a chat share it, so a turn that ends while its session
 * is being learned asks for one more learn after it rather than finding the session's lease taken. The store's
 * `close()` cancels a learn still running (no warning; its batch stays unlearned for the next learn): await
 * `learned()` before closing to keep it.
 */
import { hasFactStore } from "../contract/facts.js";
import type { SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { learnSettings } from "../facts/config.js";
import { TurnLearner } from "../facts/turn-learner.js";
import type { LearnOptions } from "../facts/types.js";
import { Session, storeOfSession } from "../session/session.js";
import { stopOnClose } from "../store/closing.js";

/** A chat's learning: asked for after each stored turn, awaited by `learned()`. */
export interface ChatLearning {
  /** Learns the session's messages not learned yet, in the background (now, or after the learn that runs). */
  kick(): void;
  /** Resolves once the session's learning in this process is done (including learns asked for meanwhile). */
  idle(): Promise<void>;
}

/** The learners at work, by store and session; a learner leaves once it is idle. */
const working = new WeakMap<SessionStore, Map<string, TurnLearner>>();

/** The learner of `sessionId` at work, or a new one with `options` (removed from the map once idle). */
function learnerOf(store: SessionStore, sessionId: string, options: LearnOptions): TurnLearner {
  let bySession = working.get(store);
  if (bySession === undefined) {
    bySession = new Map();
    working.set(store, bySession);
  }
  const current = bySession.get(sessionId);
  if (current !== undefined) return current;
  const learner = new TurnLearner(store, sessionId, options);
  bySession.set(sessionId, learner);
  // store.close() cancels the learn in flight and waits for it before closing (its batch stays unlearned).
  const untrack = stopOnClose(store, learner);
  const map = bySession;
  const leave = async (): Promise<void> => {
    await learner.idle();
    // A kick between the learn's end and this callback started another run: wait for it too.
    if (learner.active) return leave();
    if (map.get(sessionId) === learner) map.delete(sessionId);
    untrack();
  };
  queueMicrotask(() => void leave());
  return learner;
}

/**
 * The learning of one chat, checked when the door is opened (before anything is stored): `options` as
 * `learnFacts` takes them (`INVALID_ARGUMENT` otherwise), a store that keeps facts (`UNSUPPORTED` otherwise) and a
 * named session. `door` names the caller in the messages.
 */
export function chatLearning(
  store: SessionStore | undefined,
  sessionId: string,
  options: LearnOptions,
  door: string,
): ChatLearning {
  learnSettings(options);
  if (store === undefined) {
    throw new SessionError(
      "UNSUPPORTED",
      `${door}: learn needs a Session on a store (Session.create(store)…); a bare SessionProvider names no store to learn into`,
    );
  }
  if (!hasFactStore(store)) {
    throw new SessionError(
      "UNSUPPORTED",
      `${door}: learn needs a store with facts; the ${store.backend} store has none`,
    );
  }
  if (sessionId === "") {
    throw new SessionError("INVALID_ARGUMENT", `${door}: learn needs a named session (forSession(id))`, {
      issues: [{ path: "learn", rule: "conflict" }],
    });
  }
  return {
    kick: () => learnerOf(store, sessionId, options).kick(),
    idle: async () => {
      // The learner at work may be replaced by a new one once idle: wait until none is at work.
      for (;;) {
        const learner = working.get(store)?.get(sessionId);
        if (learner === undefined || !learner.active) return;
        await learner.idle();
      }
    },
  };
}

/** {@link chatLearning} for a chat's storage: a `Session` names its store and id; anything else has no store. */
export function storageLearning(storage: unknown, options: LearnOptions, door: string): ChatLearning {
  if (!(storage instanceof Session)) return chatLearning(undefined, "", options, door);
  return chatLearning(storeOfSession(storage), storage.sessionId, options, door);
}
