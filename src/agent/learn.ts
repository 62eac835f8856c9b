/**
 * Learning facts from an agent session's turns (`createSession({ learn })`; docs/FACTS.md, "Doors"): after each
 * turn the session's messages not learned yet are learned in the background, one learn at a time (a turn that ends
 * during one asks for one more after it). `close()` aborts the learn in flight and waits for it. Progress is the
 * store's learn mark, so what a closed session left unlearned is learned by its next turn after a resume, or by
 * `learnFacts`.
 */
import { hasFactStore } from "../contract/facts.js";
import type { SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { learnSettings } from "../facts/config.js";
import { TurnLearner } from "../facts/turn-learner.js";
import type { LearnOptions } from "../facts/types.js";
import { StoreSessionStorage } from "./storage/store.js";
import type { SessionStorage } from "./types.js";

/**
 * The store an agent session learns into: the storage's, when it is a store-backed storage (SQLite, Postgres,
 * `StoreSessionStorage`) whose store keeps facts; `UNSUPPORTED` otherwise, and `INVALID_ARGUMENT` for bad options,
 * before the session is opened.
 */
export async function learningStore(storage: SessionStorage, options: LearnOptions): Promise<SessionStore> {
  learnSettings(options);
  if (!(storage instanceof StoreSessionStorage)) {
    throw new SessionError(
      "UNSUPPORTED",
      "learn needs a store-backed session storage (SQLiteSessionStorage, PostgresSessionStorage or StoreSessionStorage over a store with facts)",
    );
  }
  const store = await storage.store();
  if (!hasFactStore(store)) {
    throw new SessionError(
      "UNSUPPORTED",
      `learn needs a store with facts; the ${store.backend} store has none`,
    );
  }
  return store;
}

export { TurnLearner };
