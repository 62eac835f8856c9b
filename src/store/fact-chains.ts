/**
 * What a removed fact's supersession chain leaves behind (docs/FACTS.md, "Erasure"): a fact that a removed fact had
 * superseded is re-linked to the first fact after it in the chain that stays, and is current again only when none
 * stays. Shared by the SQL program (sql/facts/steps.ts) and the memory store, so both re-link alike.
 */

/** A fact being removed: its scope key, id, status and what superseded it. */
export interface RemovedFact {
  scope: string;
  id: string;
  status: string;
  supersededBy: string | null;
}

/**
 * For each removed fact, in order: the fact that now supersedes what it had superseded (the first one after it in
 * its chain not removed with it), or null when what it had superseded is current again (it was current or
 * invalidated, or every later fact of its chain goes with it).
 */
export function successorsOf(removed: readonly RemovedFact[]): (string | null)[] {
  const byKey = new Map(removed.map((fact) => [keyOf(fact.scope, fact.id), fact]));
  return removed.map((fact) => {
    let at = fact;
    // A chain visits each removed fact once at most; a cycle (never written, but a file may hold one) ends it.
    for (let steps = 0; steps <= removed.length; steps++) {
      if (at.status !== "superseded" || at.supersededBy === null) return null;
      const next = byKey.get(keyOf(at.scope, at.supersededBy));
      if (next === undefined) return at.supersededBy;
      at = next;
    }
    return null;
  });
}

function keyOf(scope: string, id: string): string {
  return `${scope}\u0000${id}`;
}
