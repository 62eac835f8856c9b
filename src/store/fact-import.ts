/**
 * What a fact store's import accepts: facts as an export read them (`Fact`: scope, sources, status, what superseded
 * them, times), each checked as `add` checks a new fact plus its stored state, before any statement runs.
 */
import type { Fact, FactStatus } from "../contract/facts.js";
import { SessionError } from "../errors.js";
import {
  type FactDraft,
  MAX_FACTS_PER_ADD,
  parseFactId,
  parseNewFact,
  parseScope,
  type ScopeKey,
} from "./facts.js";

/** A fact to import, checked: a draft with its scope and stored state. */
export interface ImportedFact extends FactDraft {
  scope: ScopeKey;
  status: FactStatus;
  supersededBy: string | null;
  createdAt: number;
}

const STATUSES: readonly unknown[] = ["current", "superseded", "invalidated"] satisfies FactStatus[];

function invalid(message: string, path: string, rule: "type" | "one_of" | "required" | "range") {
  return new SessionError("INVALID_ARGUMENT", message, { issues: [{ path, rule }] });
}

/** Where an export's page ends: the scope key and store order of its last fact (facts go by scope, then seq). */
export interface ExportMark {
  scope: string;
  seq: number;
}

/** The cursor of an export page after `mark`. */
export function exportCursor(mark: ExportMark): string {
  return JSON.stringify([mark.scope, mark.seq]);
}

/** Checks an export page's cursor (null: from the start). */
export function parseExportCursor(cursor: unknown): ExportMark | null {
  if (cursor === undefined || cursor === null) return null;
  let value: unknown;
  try {
    value = typeof cursor === "string" ? JSON.parse(cursor) : undefined;
  } catch {
    value = undefined;
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    typeof value[0] !== "string" ||
    !Number.isSafeInteger(value[1]) ||
    value[1] < 0
  ) {
    throw invalid("cursor must be a cursor an export page returned", "cursor", "type");
  }
  return { scope: value[0], seq: value[1] };
}

/** Checks the facts of one import (at most {@link MAX_FACTS_PER_ADD}); each names its id, unique in its scope. */
export function parseImportedFacts(facts: unknown): ImportedFact[] {
  if (!Array.isArray(facts)) throw invalid("facts must be an array", "facts", "type");
  if (facts.length > MAX_FACTS_PER_ADD) {
    throw invalid(`One import stores at most ${MAX_FACTS_PER_ADD} facts`, "facts", "range");
  }
  const seen = new Set<string>();
  return facts.map((value: unknown, i) => {
    const path = `facts.${i}`;
    if (typeof value !== "object" || value === null) throw invalid("A fact must be an object", path, "type");
    const fact = value as Partial<Record<keyof Fact, unknown>>;
    if (fact.id === undefined) throw invalid("An imported fact names its id", `${path}.id`, "required");
    const hasOwner = fact.owner !== undefined && fact.owner !== null;
    const hasSession = fact.sessionId !== undefined && fact.sessionId !== null;
    if (hasOwner === hasSession) {
      throw invalid("An imported fact names exactly one of owner and sessionId", path, "one_of");
    }
    const scope = parseScope(hasOwner ? { owner: fact.owner } : { sessionId: fact.sessionId });
    const draft = parseNewFact(fact, path);
    if (!STATUSES.includes(fact.status)) {
      throw invalid(`status must be one of ${STATUSES.join(", ")}`, `${path}.status`, "one_of");
    }
    const status = fact.status as FactStatus;
    const superseded =
      fact.supersededBy === undefined || fact.supersededBy === null ? null : fact.supersededBy;
    if ((status === "superseded") !== (superseded !== null)) {
      throw invalid(
        "supersededBy names a fact exactly when status is superseded",
        `${path}.supersededBy`,
        "one_of",
      );
    }
    const createdAt = fact.createdAt;
    if (typeof createdAt !== "number" || !Number.isSafeInteger(createdAt) || createdAt < 0) {
      throw invalid("createdAt must be a whole number of ms since the epoch", `${path}.createdAt`, "type");
    }
    const key = `${scope.key}\u0000${draft.id}`;
    if (seen.has(key))
      throw invalid(`Fact id "${draft.id}" is given twice in its scope`, `${path}.id`, "one_of");
    seen.add(key);
    return {
      ...draft,
      scope,
      status,
      supersededBy: superseded === null ? null : parseFactId(superseded, `${path}.supersededBy`),
      createdAt,
    };
  });
}
