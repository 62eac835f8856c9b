/**
 * The memory store's learn marks (docs/FACTS.md, learning): per session, how far the learner got and who holds the
 * session's lease, as the SQL stores keep them in `agent_learn_marks`.
 */
import type { LearnMark } from "../contract/facts.js";

/** Learn marks held in process memory, by session id. */
export class MemoryLearnMarks {
  private readonly marks = new Map<string, LearnMark>();

  /** A copy of the session's mark, or null. */
  read(sessionId: string): LearnMark | null {
    const mark = this.marks.get(sessionId);
    return mark ? { ...mark } : null;
  }

  /** Takes the lease until `until` unless another holder's runs past `now`; the mark, or null when refused. */
  claim(sessionId: string, holder: string, now: number, until: number): LearnMark | null {
    const mark = this.marks.get(sessionId) ?? { through: 0, holder: null, leaseUntil: 0, failures: 0 };
    if (mark.holder !== null && mark.holder !== holder && mark.leaseUntil > now) return null;
    mark.holder = holder;
    mark.leaseUntil = until;
    this.marks.set(sessionId, mark);
    return { ...mark };
  }

  /** Moves the holder's mark; false when `holder` holds no lease. */
  advance(sessionId: string, holder: string, through: number, failures: number): boolean {
    const mark = this.marks.get(sessionId);
    if (mark?.holder !== holder) return false;
    mark.through = through;
    mark.failures = failures;
    return true;
  }

  /** Gives the lease up (only its holder can). */
  release(sessionId: string, holder: string): void {
    const mark = this.marks.get(sessionId);
    if (mark?.holder !== holder) return;
    mark.holder = null;
    mark.leaseUntil = 0;
  }

  /** Drops the session's mark (its erasure). */
  forget(sessionId: string): void {
    this.marks.delete(sessionId);
  }
}
