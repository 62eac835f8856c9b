/**
 * Learning one session's turns in the background, as each turn ends (the agent runtime's `learn`, and the AI SDK
 * doors' `learn`; docs/FACTS.md, "Doors"): one learn at a time, a turn that ends during one asks for one more after
 * it, `close()` aborts the learn in flight and waits for it. Progress is the store's learn mark, so what a closed
 * learner left is learned by the next one, or by `learnFacts`.
 */
import type { SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { reportTo } from "../runtime/warn.js";
import { learnFacts } from "./learn.js";
import { storeFailure } from "./session.js";
import type { LearnOptions } from "./types.js";

/** Learns one session's turns in the background (see the module comment). */
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
    const handler = onError && (() => onError(error, storeFailure(error, this.sessionId)));
    reportTo(handler, error, "AgentSessionFactsWarning", `learning ${this.sessionId}`);
  }

  /** Whether a learn runs now (or is asked for after the one that runs). */
  get active(): boolean {
    return this.running !== undefined;
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
