/**
 * The background learner: it hears appends on the store's change feed (a listener that only notes the session, so
 * no write waits for it) and learns a session once it has been quiet for `quietMs`, or at once when a window's worth
 * of messages arrived. One session at a time; a failed batch is tried again after its delay.
 */

import type { ChangeEvent } from "../contract/feed.js";
import { hasFeed } from "../contract/feed.js";
import type { SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { reportTo } from "../runtime/warn.js";
import { parseInput } from "../schema/parse.js";
import { BackgroundLoop } from "../store/feed/background.js";
import { learnSettings, quietMsSchema } from "./config.js";
import { emptyCounts } from "./counts.js";
import { factStoreOf } from "./learn.js";
import { type Learning, learningOf, learnSession, storeFailure } from "./session.js";
import type { LearnCounts, LearnOptions } from "./types.js";

/** The background learner's options. */
export interface LearnerOptions extends LearnOptions {
  /** Milliseconds without a new message before a session is learned (default 10 s). */
  quietMs?: number;
}

const DEFAULT_QUIET_MS = 10_000;
/** Delay before trying again after the store itself failed (the extractor's failures have their own). */
const STORE_RETRY_MS = 5_000;

/** Learns facts in the background from the sessions written to while it runs (start it with {@link startLearning}). */
export class FactLearner {
  /** Running totals since the learner started. */
  readonly counts: LearnCounts = emptyCounts();
  private readonly learning: Learning;
  private readonly quietMs: number;
  private readonly window: number;
  private readonly heard = new Map<string, number>();
  /** When a session's failed batch may be tried again: new messages do not bring the retry forward. */
  private readonly notBefore = new Map<string, number>();
  private readonly ready = new Set<string>();
  /** Sessions whose facts the store refused (encrypted owners whose key it lacks): not learned again by this learner. */
  private readonly encrypted = new Set<string>();
  private readonly loop: BackgroundLoop;

  constructor(store: SessionStore, options: LearnerOptions) {
    const facts = factStoreOf(store);
    if (!hasFeed(store))
      throw new SessionError("UNSUPPORTED", "learning in the background needs a change feed");
    const settings = learnSettings(options);
    this.quietMs = parseInput(quietMsSchema, options.quietMs, { path: "quietMs" }) ?? DEFAULT_QUIET_MS;
    this.window = settings.window;
    this.learning = learningOf(facts, settings, this.counts, "learner", false);
    // A failure of the store (or the feed) rather than of a batch: reported as the failure of no batch (attempts 0).
    this.storeFailed = (error, sessionId) => {
      const { onError } = settings;
      const handler = onError && (() => onError(error, storeFailure(error, sessionId)));
      reportTo(handler, error, "AgentSessionFactsWarning", `learning ${sessionId || "(the change feed)"}`);
    };
    this.loop = new BackgroundLoop(store, {
      note: (event) => this.note(event),
      pending: () => this.ready.size > 0,
      pass: (signal) => this.run(signal),
      report: (error) => this.storeFailed(error, ""),
    });
  }

  private readonly storeFailed: (error: unknown, sessionId: string) => void;

  /**
   * Stops listening to a session whose facts the store refuses (an encrypted owner's, on a store without the owner's
   * key), said once; its mark stays, so a learner on a store with the key learns it from there.
   */
  private leaveEncrypted(sessionId: string): void {
    this.notBefore.delete(sessionId);
    this.encrypted.add(sessionId);
    this.storeFailed(
      new SessionError(
        "DECRYPT_FAILED",
        `facts of session ${JSON.stringify(sessionId)} are not learned: its owner is encrypted, and this store does not have the owner's key (docs/FACTS.md, Encryption)`,
      ),
      sessionId,
    );
  }

  private note(event: ChangeEvent): void {
    if (this.loop.closed || event.sessionId === "" || this.encrypted.has(event.sessionId)) return;
    const learnable =
      event.type === "append" ||
      event.type === "update" ||
      event.type === "reset" ||
      (event.type === "import" && event.inserted);
    if (!learnable) return;
    const heard = (this.heard.get(event.sessionId) ?? 0) + 1;
    this.heard.set(event.sessionId, heard);
    this.later(event.sessionId, heard >= this.window ? 0 : this.quietMs);
  }

  // A pending learn never keeps the process alive (the loop's timers).
  private later(sessionId: string, wait: number): void {
    const ms = Math.max(wait, (this.notBefore.get(sessionId) ?? 0) - Date.now());
    this.loop.after(sessionId, ms, () => {
      this.ready.add(sessionId);
      this.loop.kick();
    });
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!this.loop.closed && this.ready.size > 0) {
      const sessionId = this.ready.values().next().value as string;
      this.ready.delete(sessionId);
      this.heard.delete(sessionId);
      try {
        const result = await learnSession(this.learning, sessionId, signal);
        // Another learner holds it: look again once it may have let go (it learns what it reads till then).
        if (result.state === "busy" || result.state === "lost")
          this.later(sessionId, Math.max(this.quietMs, 1_000));
        else if (result.state === "encrypted") this.leaveEncrypted(sessionId);
        else if (result.state === "retry") {
          this.notBefore.set(sessionId, Date.now() + result.retryIn);
          this.later(sessionId, result.retryIn);
        } else this.notBefore.delete(sessionId);
      } catch (error) {
        if (this.loop.closed) return;
        this.storeFailed(error, sessionId);
        this.later(sessionId, STORE_RETRY_MS);
      }
    }
  }

  /** Learns every session heard of now, without waiting for it to be quiet, and resolves when done (tests, CLI). */
  async flush(): Promise<void> {
    for (const sessionId of this.loop.takeTimers()) this.ready.add(sessionId);
    this.loop.kick();
    await this.idle();
  }

  /** Resolves once nothing is being learned. */
  async idle(): Promise<void> {
    await this.loop.idle();
  }

  /** Stops listening, abandons an extractor call in flight (its batch stays unlearned) and waits for the rest. */
  async close(): Promise<void> {
    await this.loop.close(new SessionError("CLOSED", "the learner was closed"));
  }
}

/** Starts learning facts in the background from the store's new messages; `close()` it before the store. */
export function startLearning(store: SessionStore, options: LearnerOptions): FactLearner {
  return new FactLearner(store, options);
}
