/**
 * Fact sources an import leaves out (docs/CLI.md, "import"): a source naming a message that is neither stored nor a
 * readable message earlier in the file, as an export of a store written before every fact write checked its sources
 * can hold (store/fact-sources.ts). One such fact must not make a whole backup unrestorable: the check pass notes
 * the sources it could not find (check.ts, fact-sources.ts) instead of refusing the file, and the write pass leaves
 * each out (asking the store again first: a message the file brought after one fact and before another is a source
 * of the second), a fact left without a source too (a fact needs one), and reports them. Memory: the sources noted.
 */
import type { Fact } from "../../contract/facts.js";

/** The most left-out sources a report names (all are counted). */
export const MAX_DANGLING_NAMED = 10;

/** What an import left out: sources naming missing messages, and facts left without any. */
export interface DanglingReport {
  /** Sources left out. */
  sources: number;
  /** Facts not imported: every source of theirs was left out. */
  facts: number;
  /** The first {@link MAX_DANGLING_NAMED} sources left out, with their facts' ids. */
  named: { fact: string; session: string; message: string }[];
}

/** The sources the check pass could not find, and what the write pass left out of them (see the module). */
export class DanglingSources {
  private readonly missing = new Map<string, Set<string>>();
  /** What the write pass left out (counted as it goes). */
  readonly report: DanglingReport = { sources: 0, facts: 0, named: [] };

  /** Notes a source the check pass found neither stored nor readable earlier in the file. */
  note(sessionId: string, messageId: string): void {
    const ids = this.missing.get(sessionId);
    if (ids) ids.add(messageId);
    else this.missing.set(sessionId, new Set([messageId]));
  }

  /** Whether a source was noted. */
  has(sessionId: string, messageId: string): boolean {
    return this.missing.get(sessionId)?.has(messageId) === true;
  }

  /**
   * The fact as the write pass imports it: without the noted sources `stored` (the store now) does not hold, null
   * when none is left; each left out is counted in {@link report}.
   */
  async kept(
    fact: Fact,
    stored: (sessionId: string, messageId: string) => Promise<boolean>,
  ): Promise<Fact | null> {
    if (this.missing.size === 0) return fact;
    const sources = [];
    for (const source of fact.sources) {
      if (
        !this.has(source.sessionId, source.messageId) ||
        (await stored(source.sessionId, source.messageId))
      ) {
        sources.push(source);
        continue;
      }
      this.report.sources++;
      if (this.report.named.length < MAX_DANGLING_NAMED) {
        this.report.named.push({ fact: fact.id, session: source.sessionId, message: source.messageId });
      }
    }
    if (sources.length === fact.sources.length) return fact;
    if (sources.length === 0) {
      this.report.facts++;
      return null;
    }
    return { ...fact, sources };
  }
}
