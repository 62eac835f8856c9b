/**
 * The mechanics every background worker over the change feed shares (the vector worker, the fact learner): a
 * listener that only notes what changed, so no write waits for it; one pass at a time, started again while work
 * remains; timers that never keep the process alive; a hold while a failed pass waits for its retry; and a close
 * that stops listening, abandons the call in flight and waits for the pass. What a pass does, what it notes and how
 * it stores its progress stay with each worker.
 */
import type { ChangeEvent, FeedCapableStore, Unsubscribe } from "../../contract/feed.js";
import { unref } from "../../runtime/deadline.js";

/** What a worker gives its loop. */
export interface BackgroundWork {
  /** Notes one change: no I/O (a write never waits for it); it kicks the loop when there is work. */
  note(event: ChangeEvent): void;
  /** True while a pass has something to do. */
  pending(): boolean;
  /** One pass over the pending work; `signal` aborts when the loop closes. */
  pass(signal: AbortSignal): Promise<void>;
  /** Reports a failure of the feed itself. */
  report(error: unknown): void;
  /** Runs at every kick, before the loop decides whether to start a pass. */
  kicked?(): void;
}

/** One worker's loop over a store's change feed (see the module comment). */
export class BackgroundLoop {
  private readonly abort = new AbortController();
  private readonly unsubscribe: Unsubscribe;
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private hold: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    feed: FeedCapableStore,
    private readonly work: BackgroundWork,
  ) {
    this.unsubscribe = feed.subscribe((event) => work.note(event), {
      onError: (error) => work.report(error),
    });
  }

  /** True once `close()` began: a pass stops, and a failure after it is no failure. */
  get closed(): boolean {
    return this.stopped;
  }

  /** Starts a pass unless one runs, a retry is held or the loop is closed; when it ends, starts again if due. */
  kick(): void {
    this.work.kicked?.();
    if (this.stopped || this.running || this.hold) return;
    this.running = this.work.pass(this.abort.signal).finally(() => {
      this.running = undefined;
      // Work noted after the pass's last check but before this callback found it running: start again.
      if (this.work.pending()) this.kick();
    });
  }

  /** Runs `then` after `ms` under `key` (replacing the timer already there); the timer never keeps the process alive. */
  after(key: string, ms: number, then: () => void): void {
    const timer = this.timers.get(key);
    if (timer !== undefined) clearTimeout(timer);
    const next = setTimeout(() => {
      this.timers.delete(key);
      then();
    }, ms);
    unref(next);
    this.timers.set(key, next);
  }

  /** Cancels every timer set with {@link after} and answers their keys (their work is due now). */
  takeTimers(): string[] {
    for (const timer of this.timers.values()) clearTimeout(timer);
    const keys = [...this.timers.keys()];
    this.timers.clear();
    return keys;
  }

  /** Starts no pass for `ms` (a failed pass's retry), then kicks; the wait never keeps the process alive. */
  holdFor(ms: number): void {
    this.hold = setTimeout(() => {
      this.hold = undefined;
      this.kick();
    }, ms);
    unref(this.hold);
  }

  /** Resolves once no pass runs. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops listening and every timer, aborts the pass's signal with `reason`, and waits for the pass to end. */
  async close(reason: unknown): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe();
    this.takeTimers();
    if (this.hold) clearTimeout(this.hold);
    this.hold = undefined;
    this.abort.abort(reason);
    await this.running?.catch(() => undefined);
  }
}
