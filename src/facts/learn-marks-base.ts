/**
 * The learner's half of the fact stores' base: its progress marks per session (claimed, advanced, released) and the
 * messages it has not learned yet, every argument checked here so a backend supplies only the reads and writes of
 * its rows. StoreFacts (store-base.ts) extends it with the facts themselves.
 */
import type { LearnableMessage, LearnMark } from "../contract/facts.js";
import { assertSessionId } from "../message/ids.js";
import { parseHolder, parseSeq, parseTime, parseUnlearnedLimit } from "../store/facts.js";

/** The base of the fact stores' learn marks (see the module comment). */
export abstract class StoreLearnMarks {
  /** Throws `CLOSED` once the store is closed. */
  protected abstract assertOpen(): void;
  protected abstract readUnlearned(
    sessionId: string,
    after: number,
    limit: number,
  ): Promise<LearnableMessage[]>;
  protected abstract readMark(sessionId: string): Promise<LearnMark | null>;
  /** Whether a fact row exists. */
  protected abstract readAny(): Promise<boolean>;
  protected abstract writeClaim(
    sessionId: string,
    holder: string,
    now: number,
    until: number,
  ): Promise<LearnMark | null>;
  protected abstract writeAdvance(
    sessionId: string,
    holder: string,
    through: number,
    failures: number,
  ): Promise<boolean>;
  protected abstract writeRelease(sessionId: string, holder: string): Promise<void>;

  async unlearned(sessionId: string, after: number, limit: number): Promise<LearnableMessage[]> {
    assertSessionId(sessionId);
    const from = parseSeq(after, "after");
    const max = parseUnlearnedLimit(limit);
    this.assertOpen();
    return this.readUnlearned(sessionId, from, max);
  }

  async isEmpty(): Promise<boolean> {
    this.assertOpen();
    return !(await this.readAny());
  }

  async mark(sessionId: string): Promise<LearnMark | null> {
    assertSessionId(sessionId);
    this.assertOpen();
    return this.readMark(sessionId);
  }

  async claim(sessionId: string, holder: string, now: number, until: number): Promise<LearnMark | null> {
    assertSessionId(sessionId);
    const token = parseHolder(holder);
    const at = parseTime(now, "now");
    const end = parseTime(until, "until");
    this.assertOpen();
    return this.writeClaim(sessionId, token, at, end);
  }

  async advance(sessionId: string, holder: string, through: number, failures: number): Promise<boolean> {
    assertSessionId(sessionId);
    const token = parseHolder(holder);
    const mark = parseSeq(through, "through");
    const failed = parseSeq(failures, "failures");
    this.assertOpen();
    return this.writeAdvance(sessionId, token, mark, failed);
  }

  async release(sessionId: string, holder: string): Promise<void> {
    assertSessionId(sessionId);
    const token = parseHolder(holder);
    this.assertOpen();
    await this.writeRelease(sessionId, token);
  }
}
