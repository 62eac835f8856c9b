/**
 * Consolidation: each checked fact of a batch is compared with its scope's current facts and is added, supersedes
 * one, invalidates one, or is dropped as a duplicate (docs/FACTS.md, "Consolidation"). Nothing is overwritten: a
 * superseded or invalidated fact stays, with its status.
 */
import type { Fact, FactScope, FactStore, NewFact } from "../contract/facts.js";
import type { OwnerDigest } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { sha256Base64url } from "../runtime/bytes.js";
import type { CheckedFact } from "./check.js";
import { normalizeFact, queryOf } from "./words.js";

/** Current facts a new fact is compared with (found by its words), besides those shown to the extractor. */
export const COMPARED_FACTS = 10;

/** What consolidation did with one fact. */
export type Outcome = "added" | "superseded" | "invalidated" | "duplicate";

/** The batch a fact comes from, as consolidation needs it. */
export interface BatchContext {
  scope: FactScope;
  sessionId: string;
  /** When each of the batch's messages was stored, by id (a fact is observed at its newest source's time). */
  times: ReadonlyMap<string, number>;
  /** The current facts shown to the extractor (compared first, without a search). */
  known: readonly Fact[];
  producer: string;
  /**
   * The scope owner's keyed digests (registry.ownerDigests: current key first), none for a scope in clear: a fact
   * id is derived from its text, and a sealed owner's must not confirm a guess of it (docs/PRIVACY.md).
   */
  digests: readonly OwnerDigest[];
}

/**
 * The ids a learned fact may be stored under, the one to store it under first: a digest of its scope, its sources
 * and its folded text, so that the same batch learned again (a learner killed before it moved the mark) finds its
 * facts already stored instead of adding them twice. For an owner with a key the digest is keyed (an HMAC under each
 * key its keyring answers, current first), then the SHA-256 a fact learned before ids were keyed has; in clear, the
 * SHA-256 alone.
 */
export function learnedFactIds(
  scope: FactScope,
  sessionId: string,
  fact: CheckedFact,
  digests: readonly OwnerDigest[] = [],
): string[] {
  const where = "owner" in scope ? `o:${scope.owner}` : `s:${scope.sessionId}`;
  const sources = [...fact.sources].sort();
  const input = JSON.stringify([where, sessionId, sources, normalizeFact(fact.text)]);
  // 128 bits of the HMAC as hex: an id's bytes need not match the unkeyed form's, only be as unique.
  const keyed = digests.map((digest) => `fact_${digest(`fact\u0000${input}`).slice(0, 32)}`);
  return [...new Set([...keyed, `fact_${sha256Base64url(input).slice(0, 27)}`])];
}

/**
 * Applies one fact. Order of the rules:
 * 1. a fact whose id is stored already (the same fact from the same sources: the batch learned again) is a
 *    duplicate (a `supersede` it carried is completed if the target is still current);
 * 2. an action naming a current fact of the scope is followed: `duplicate` drops the fact, `invalidate` withdraws
 *    the target (the new fact is not stored), `supersede` stores the fact and marks the target superseded by it;
 *    an action naming anything else (an unknown id, a fact no longer current) is ignored and the rules go on;
 * 3. a current fact whose folded text equals the new one's (among those shown and those found by its words) makes
 *    it a duplicate;
 * 4. otherwise it is added.
 */
export async function consolidate(
  store: FactStore,
  batch: BatchContext,
  fact: CheckedFact,
  seen: Set<string>,
): Promise<Outcome> {
  const { scope } = batch;
  const ids = learnedFactIds(scope, batch.sessionId, fact, batch.digests);
  const id = ids[0] as string;
  const folded = normalizeFact(fact.text);
  if (seen.has(folded)) return "duplicate";
  const target = fact.target === null ? null : await currentFact(store, scope, fact.target);
  const stored = await storedId(store, scope, ids);
  if (stored !== null) {
    // Learned before by a try that stopped between storing the fact and marking what it replaces: finish that.
    const finish = target !== null && fact.action === "supersede" && target.id !== stored;
    return finish && (await store.supersede(scope, target.id, stored)) ? "superseded" : "duplicate";
  }
  if (target !== null && fact.action === "duplicate") return "duplicate";
  if (target !== null && fact.action === "invalidate") {
    return (await store.invalidate(scope, target.id)) ? "invalidated" : "duplicate";
  }
  const replaces = target !== null && fact.action === "supersede" ? target : null;
  if (replaces === null && (await repeats(store, batch, folded, fact.text))) return "duplicate";
  seen.add(folded);
  try {
    await store.add(scope, [newFact(batch, fact, id)]);
  } catch (error) {
    // Stored meanwhile by a learner that lost its lease while it still ran: the same fact, not a second one.
    if (error instanceof SessionError && error.code === "CONFLICT") return "duplicate";
    throw error;
  }
  if (replaces !== null && (await store.supersede(scope, replaces.id, id))) return "superseded";
  return "added";
}

// The first of a fact's possible ids that is stored (under an earlier key, or before ids were keyed), if any.
async function storedId(store: FactStore, scope: FactScope, ids: readonly string[]): Promise<string | null> {
  for (const id of ids) if ((await store.get(scope, id)) !== null) return id;
  return null;
}

// Read again rather than taken from the facts shown: an earlier fact of the batch may have replaced it.
async function currentFact(store: FactStore, scope: FactScope, id: string): Promise<Fact | null> {
  const fact = await store.get(scope, id);
  return fact !== null && fact.status === "current" ? fact : null;
}

async function repeats(
  store: FactStore,
  batch: BatchContext,
  folded: string,
  text: string,
): Promise<boolean> {
  if (batch.known.some((fact) => normalizeFact(fact.text) === folded)) return true;
  const query = queryOf(text);
  if (query === "") return false;
  const hits = await store.search(batch.scope, query, { limit: COMPARED_FACTS });
  return hits.some((hit) => hit.fact.status === "current" && normalizeFact(hit.fact.text) === folded);
}

function newFact(batch: BatchContext, fact: CheckedFact, id: string): NewFact {
  const observedAt = Math.max(...fact.sources.map((source) => batch.times.get(source) ?? 0));
  return {
    id,
    text: fact.text,
    about: fact.about,
    observedAt,
    sources: fact.sources.map((messageId) => ({ sessionId: batch.sessionId, messageId })),
    producer: batch.producer,
  };
}
