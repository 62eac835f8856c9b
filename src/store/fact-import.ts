/**
 * What a fact store's import accepts: facts as an export read them (`Fact`: scope, sources, status, what superseded
 * them, times), each checked as `add` checks a new fact plus its stored state, before any statement runs.
 */

import { z } from "zod";
import type { FactStatus } from "../contract/facts.js";
import { SessionError } from "../errors.js";
import { assertSessionId } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { checkedBy } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { epochMs, FACT_STATUSES, factId } from "./fact-schema.js";
import {
  draftOf,
  type FactDraft,
  MAX_FACTS_PER_ADD,
  newFactFields,
  parseScope,
  type ScopeKey,
} from "./facts.js";
import { parseOwner } from "./owner.js";

/** A fact to import, checked: a draft with its scope and stored state. */
export interface ImportedFact extends FactDraft {
  scope: ScopeKey;
  status: FactStatus;
  supersededBy: string | null;
  createdAt: number;
}

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

const importedFact = z
  .looseObject(
    {
      ...newFactFields,
      id: factId(),
      owner: checkedBy<string>((value) => parseOwner(value))
        .nullable()
        .optional(),
      sessionId: checkedBy<string>((value) => assertSessionId(value))
        .nullable()
        .optional(),
      status: z.enum(
        FACT_STATUSES as [FactStatus, ...FactStatus[]],
        rule(`status must be one of ${FACT_STATUSES.join(", ")}`),
      ),
      supersededBy: factId().nullable().optional(),
      createdAt: epochMs("createdAt"),
    },
    rule("A fact must be an object", "type"),
  )
  .check((ctx) => {
    const { owner, sessionId, status, supersededBy } = ctx.value;
    const refuse = (path: string[], message: string) =>
      ctx.issues.push({ code: "custom", input: ctx.value, path, message, params: { rule: "one_of" } });
    if ((owner === undefined || owner === null) === (sessionId === undefined || sessionId === null))
      refuse([], "An imported fact names exactly one of owner and sessionId");
    if ((status === "superseded") !== (supersededBy !== undefined && supersededBy !== null))
      refuse(["supersededBy"], "supersededBy names a fact exactly when status is superseded");
  });

const importedFacts = z
  .array(importedFact, rule("facts must be an array"))
  .max(MAX_FACTS_PER_ADD, { error: `One import stores at most ${MAX_FACTS_PER_ADD} facts` })
  .check((ctx) => {
    const seen = new Set<string>();
    ctx.value.forEach((fact, i) => {
      const key = `${fact.owner ? `o:${fact.owner}` : `s:${fact.sessionId}`}\u0000${fact.id}`;
      if (seen.has(key))
        ctx.issues.push({
          code: "custom",
          input: fact.id,
          path: [i, "id"],
          message: `Fact id "${fact.id}" is given twice in its scope`,
          params: { rule: "one_of" },
        });
      seen.add(key);
    });
  });

/** Checks the facts of one import (at most {@link MAX_FACTS_PER_ADD}); each names its id, unique in its scope. */
export function parseImportedFacts(facts: unknown): ImportedFact[] {
  return parseInput(importedFacts, facts, { path: "facts" }).map((fact) => ({
    ...draftOf(fact),
    scope: parseScope(fact.owner ? { owner: fact.owner } : { sessionId: fact.sessionId }),
    status: fact.status,
    supersededBy: fact.supersededBy ?? null,
    createdAt: fact.createdAt,
  }));
}
