/**
 * A fact store's import (FactStore.importFacts) over its primitives: every imported fact checked against the store
 * (its sources in its scope, their messages stored, nothing of an encrypted owner whose key the store lacks) before
 * any is written, then one write per scope. Also the scope rule `add` checks.
 */
import { SessionError } from "../errors.js";
import type { ImportedFact } from "../store/fact-import.js";
import { assertSourcesHeld, sourcesBySession } from "../store/fact-sources.js";
import type { FactDraft, ScopeKey } from "../store/facts.js";

/** What an import needs of a fact store. */
export interface FactImportHost {
  readOwned(owner: string, sessionIds: readonly string[]): Promise<Set<string>>;
  /** `DECRYPT_FAILED` for a scope whose facts the store cannot seal (sql-facts.ts). */
  assertWritable(scope: ScopeKey): Promise<void>;
  /** Which of `messageIds` the session holds. */
  readStored(sessionId: string, messageIds: readonly string[]): Promise<Set<string>>;
  /**
   * Stores the facts whose ids the scope does not hold, in one transaction, refusing a source not stored (fact `i`
   * named `paths[i]`); how many were stored.
   */
  writeImported(scope: ScopeKey, facts: readonly ImportedFact[], paths: readonly string[]): Promise<number>;
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
  // Every source a stored message, checked for the whole call before its first scope is written (the write checks
  // its own again in its transaction: store/fact-sources.ts), so a refused call writes nothing.
  const held = new Map<string, Set<string>>();
  for (const [sessionId, ids] of sourcesBySession(facts))
    held.set(sessionId, await host.readStored(sessionId, ids));
  assertSourcesHeld(
    facts,
    held,
    facts.map((_, i) => `facts.${i}`),
  );
  let inserted = 0;
  for (const group of scopes.values()) {
    inserted += await host.writeImported(group.scope, group.facts, group.paths);
  }
  return { inserted, skipped: facts.length - inserted };
}
