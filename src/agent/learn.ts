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
import { learnFacts } from "../facts/learn.js";
import type { LearnOptions } from "../facts/types.js";
import { emitWarning } from "../runtime/warn.js";
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

/** Learns one agent session's turns in the background (see the module comment). */
export class TurnLearner {
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly store: SessionStore,
    private readonly sessionId: string,
    private readonly options: LearnOptions,
  ) {}

  /** Learns what the session holds that is not learned yet, now or after the learn that runs. */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = undefined;
    });
  }

  private async run(): Promise<void> {
    do {
      this.again = false;
      try {
        // A failed batch is retried and reported by learnFacts itself; what reaches here is the store's failure.
        await learnFacts(this.store, {
          ...this.options,
          sessionIds: [this.sessionId],
          signal: this.abort.signal,
        });
      } catch (error) {
        if (this.abort.signal.aborted) return;
        this.report(error);
      }
    } while (this.again && !this.closed);
  }

  private report(error: unknown): void {
    const { onError } = this.options;
    if (!onError) {
      emitWarning(error, "AgentSessionFactsWarning", `learning ${this.sessionId}`);
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    const failure = { sessionId: this.sessionId, fromSeq: 0, throughSeq: 0, attempts: 0, skipped: false };
    onError(error, { ...failure, error: message });
  }

  /** Resolves once no learn runs or is asked for. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops: a learn in flight is aborted (its batch stays unlearned) and awaited; no turn starts another. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort(new SessionError("CLOSED", "the agent session was closed"));
    await this.idle();
  }
}
