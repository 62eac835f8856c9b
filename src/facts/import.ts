/**
 * A fact store's import (FactStore.importFacts) over its primitives: every imported fact checked against the store
 * (its sources in its scope, their messages stored, nothing of an encrypted owner whose key the store lacks) before
 * any is written, then one write per scope. Also the scope rule `add` checks.
 */
import { SessionError } from "../errors.js";
import type { ImportedFact } from "../store/fact-import.js";
import type { FactDraft, ScopeKey } from "../store/facts.js";

/** What an import needs of a fact store. */
export interface FactImportHost {
  readOwned(owner: string, sessionIds: readonly string[]): Promise<Set<string>>;
  /** `DECRYPT_FAILED` for a scope whose facts the store cannot seal (sql-facts.ts). */
  assertWritable(scope: ScopeKey): Promise<void>;
  /** Which of `messageIds` the session holds. */
  readStored(sessionId: string, messageIds: readonly string[]): Promise<Set<string>>;
  /** Stores the facts whose ids the scope does not hold, in one transaction; how many were stored. */
  writeImported(scope: ScopeKey, facts: readonly ImportedFact[]): Promise<number>;
}

/** `INVALID_ARGUMENT` for a source outside the scope: another session, or a session not the owner's. */
export async function assertInScope(
  readOwned: FactImportHost["readOwned"],
  scope: ScopeKey,
  drafts: readonly FactDraft[],
  paths: readonly string[],
): Promise<string[]> {
  const sessionIds = [...new Set(drafts.flatMap((d) => d.sources.map((s) => s.sessionId)))];
  const owned = scope.owner === null ? undefined : await readOwned(scope.owner, sessionIds);
  drafts.forEach((draft, i) => {
    draft.sources.forEach((source, j) => {
      const inScope = owned ? owned.has(source.sessionId) : source.sessionId === scope.sessionId;
      if (inScope) return;
      throw new SessionError(
        "INVALID_ARGUMENT",
        `Source session "${source.sessionId}" is not ${owned ? "the owner's" : "the fact's session"}`,
        { issues: [{ path: `${paths[i]}.sources.${j}.sessionId`, rule: "invalid" }] },
      );
    });
  });
  return sessionIds;
}

/** Imports checked facts (see the module comment): how many were stored, how many skipped (their id was held). */
export async function importFacts(
  host: FactImportHost,
  facts: readonly ImportedFact[],
): Promise<{ inserted: number; skipped: number }> {
  const scopes = new Map<string, { scope: ScopeKey; facts: ImportedFact[]; paths: string[] }>();
  facts.forEach((fact, i) => {
    const group = scopes.get(fact.scope.key) ?? { scope: fact.scope, facts: [], paths: [] };
    group.facts.push(fact);
    group.paths.push(`facts.${i}`);
    scopes.set(fact.scope.key, group);
  });
  for (const group of scopes.values()) {
    await assertInScope(host.readOwned, group.scope, group.facts, group.paths);
    await host.assertWritable(group.scope);
  }
  // A source must be a stored message: a fact is never kept with evidence this store does not hold.
  const wanted = new Map<string, Set<string>>();
  for (const fact of facts) {
    for (const { sessionId, messageId } of fact.sources) {
      const ids = wanted.get(sessionId) ?? new Set<string>();
      ids.add(messageId);
      wanted.set(sessionId, ids);
    }
  }
  for (const [sessionId, ids] of wanted) {
    const stored = await host.readStored(sessionId, [...ids]);
    if (stored.size === ids.size) continue;
    facts.forEach((fact, i) => {
      fact.sources.forEach((s, j) => {
        if (s.sessionId !== sessionId || stored.has(s.messageId)) return;
        throw new SessionError(
          "INVALID_ARGUMENT",
          `Fact "${fact.id}" names message "${s.messageId}" of session "${sessionId}", which this store does not hold (import the session first)`,
          { issues: [{ path: `facts.${i}.sources.${j}.messageId`, rule: "invalid" }] },
        );
      });
    });
  }
  let inserted = 0;
  for (const group of scopes.values()) inserted += await host.writeImported(group.scope, group.facts);
  return { inserted, skipped: facts.length - inserted };
}
