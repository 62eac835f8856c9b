/**
 * The rule that a fact's every source is a message the store holds (docs/FACTS.md, "Sources"), shared by every
 * write of fact rows: the SQL program (sql/facts/steps.ts), which reads the sources in the write's transaction, the
 * memory store, which checks them in the same synchronous step as it keeps the facts, and an import's check before
 * its first write (facts/import.ts). A fact naming a message that is not stored would outlive every delete of its
 * session's messages (none names it) and make an export of the store unimportable.
 */
import type { FactSource } from "../contract/facts.js";
import { SessionError } from "../errors.js";

/** The distinct sessions the facts' sources lie in. */
export function sourceSessions(facts: readonly { sources: readonly FactSource[] }[]): string[] {
  return [...new Set(facts.flatMap((fact) => fact.sources.map((source) => source.sessionId)))];
}

/** The message ids the facts' sources name, by session: one read of stored messages per session asks for them. */
export function sourcesBySession(
  facts: readonly { sources: readonly FactSource[] }[],
): Map<string, string[]> {
  const wanted = new Map<string, Set<string>>();
  for (const fact of facts) {
    for (const { sessionId, messageId } of fact.sources) {
      const ids = wanted.get(sessionId) ?? new Set<string>();
      ids.add(messageId);
      wanted.set(sessionId, ids);
    }
  }
  return new Map([...wanted].map(([sessionId, ids]) => [sessionId, [...ids]]));
}

/**
 * `INVALID_ARGUMENT` naming the first source of `facts` (fact `i` at `paths[i]`) that is not among `held` (the stored
 * message ids, by session), as `add` and an import refuse a fact without its evidence.
 */
export function assertSourcesHeld(
  facts: readonly { id: string; sources: readonly FactSource[] }[],
  held: ReadonlyMap<string, ReadonlySet<string>>,
  paths: readonly string[],
): void {
  facts.forEach((fact, i) => {
    fact.sources.forEach(({ sessionId, messageId }, j) => {
      if (held.get(sessionId)?.has(messageId)) return;
      throw new SessionError(
        "INVALID_ARGUMENT",
        `Fact "${fact.id}" names message "${messageId}" of session "${sessionId}", which this store does not hold`,
        { issues: [{ path: `${paths[i] ?? `facts.${i}`}.sources.${j}.messageId`, rule: "invalid" }] },
      );
    });
  });
}
