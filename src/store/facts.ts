/**
 * What a fact store accepts: a scope, a new fact, a query, a cursor, a lease, each checked the same way on every
 * backend before any statement runs, so bad input is a `SessionError` with its path, never a partial write.
 */

import { z } from "zod";
import type { FactQuery, FactSource, FactStatus } from "../contract/facts.js";
import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import { assertId, assertSessionId, MAX_NAME_BYTES } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { checkedBy, refusedBy } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { epochMs, FACT_STATUSES, factId, factSources, factText } from "./fact-schema.js";
import { parseOwner } from "./owner.js";

/** A list's or search's default and largest page: the contract's bound. */
export const FACT_PAGE = 100;
/** The longest fact text, in UTF-8 bytes: a fact is one sentence, and a longer one is refused, never cut. */
export const MAX_FACT_BYTES = 4096;
/** The most sources one fact names. */
export const MAX_FACT_SOURCES = 64;
/** The most facts one `add` stores (one transaction). */
export const MAX_FACTS_PER_ADD = 100;
/** The most message ids a `sourcesIn` filter names (an active path's ids). */
export const MAX_SOURCES_IN = 100_000;
/** The most messages one `unlearned` read returns. */
export const MAX_UNLEARNED = 1000;

/** A scope checked, with the key its facts are stored under ("o:" + owner or "s:" + session id). */
export interface ScopeKey {
  owner: string | null;
  sessionId: string | null;
  key: string;
}

/** A fact ready to store: checked, with its id. */
export interface FactDraft {
  id: string;
  text: string;
  about: string | null;
  observedAt: number;
  sources: FactSource[];
  producer: string;
}

/** A query checked: statuses, page size and the source filter (undefined: any source). */
export interface FactFilter {
  status: readonly FactStatus[];
  limit: number;
  sourcesIn: readonly string[] | undefined;
  /** The session the sources must lie in (undefined: any). */
  sourceSession: string | undefined;
}

function invalid(
  message: string,
  path: string,
  rule: "required" | "type" | "range" | "too_long" | "format" | "one_of",
) {
  return new SessionError("INVALID_ARGUMENT", message, { issues: [{ path, rule }] });
}

/** Checks a scope: exactly one of `owner` (an owner id) and `sessionId`. */
export function parseScope(scope: unknown): ScopeKey {
  const value = scope as Partial<Record<"owner" | "sessionId", unknown>> | null;
  if (typeof value !== "object" || value === null)
    throw invalid("A fact scope must be { owner } or { sessionId }", "scope", "type");
  const hasOwner = value.owner !== undefined;
  const hasSession = value.sessionId !== undefined;
  if (hasOwner === hasSession) {
    throw invalid("A fact scope names exactly one of owner and sessionId", "scope", "one_of");
  }
  if (hasOwner) {
    const owner = parseOwner(value.owner, "scope.owner");
    return { owner, sessionId: null, key: `o:${owner}` };
  }
  assertSessionId(value.sessionId, "scope.sessionId");
  return { owner: null, sessionId: value.sessionId, key: `s:${value.sessionId}` };
}

/** Checks a fact id (a stored name). */
export function parseFactId(id: unknown, path = "id"): string {
  assertId(id, "A fact id", path);
  return id;
}

/** One new fact (`add`): its text, whom it is about, when it was observed, its sources and producer; an id if given. */
export const newFactFields = {
  id: factId().optional(),
  text: factText("A fact's text", MAX_FACT_BYTES, true),
  about: factText("A fact's about", MAX_NAME_BYTES, false).optional(),
  observedAt: epochMs("observedAt"),
  sources: factSources(MAX_FACT_SOURCES),
  producer: factText("A fact's producer", MAX_NAME_BYTES, true),
};

/** The draft a checked fact becomes: its id (a random UUID when left out), `about` null when not given. */
export function draftOf(fact: z.output<z.ZodObject<typeof newFactFields>>): FactDraft {
  return {
    id: fact.id ?? crypto.randomUUID(),
    text: fact.text as string,
    about: fact.about ?? null,
    observedAt: fact.observedAt,
    sources: fact.sources,
    producer: fact.producer as string,
  };
}

const newFacts = z
  .array(
    z.looseObject(newFactFields, rule("A fact must be an object", "type")),
    rule("facts must be an array"),
  )
  .max(MAX_FACTS_PER_ADD, { error: `One add stores at most ${MAX_FACTS_PER_ADD} facts` })
  .check((ctx) => {
    const ids = new Set<unknown>();
    ctx.value.forEach((fact, i) => {
      if (fact.id === undefined) return;
      if (ids.has(fact.id))
        ctx.issues.push({
          code: "custom",
          input: fact.id,
          path: [i, "id"],
          message: `Fact id "${fact.id}" is given twice`,
          params: { rule: "format" },
        });
      ids.add(fact.id);
    });
  });

/** Checks the facts of one `add` and gives each its id (a random UUID when left out); ids must differ. */
export function parseNewFacts(facts: unknown): FactDraft[] {
  return parseInput(newFacts, facts, { path: "facts" }).map(draftOf);
}

const STATUS_LIST = `status must list some of ${FACT_STATUSES.join(", ")}`;

const factQuery = z.looseObject(
  {
    status: refusedBy<FactStatus[]>(
      (value) =>
        Array.isArray(value) && value.every((one) => FACT_STATUSES.includes(one))
          ? undefined
          : `${STATUS_LIST}, got ${describe(value)}`,
      () => "one_of",
    ).optional(),
    limit: refusedBy<number>(
      (value) =>
        typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= FACT_PAGE
          ? undefined
          : `limit must be a whole number from 0 to ${FACT_PAGE}, got ${describe(value)}`,
      () => "range",
    ).optional(),
    // The array as a whole: a schema per element would allocate for each of up to MAX_SOURCES_IN ids.
    sourcesIn: refusedBy<unknown[]>(
      (value) =>
        !Array.isArray(value)
          ? `sourcesIn must be an array of message ids, got ${describe(value)}`
          : value.length > MAX_SOURCES_IN
            ? `sourcesIn names at most ${MAX_SOURCES_IN} message ids, got ${value.length}`
            : undefined,
      (value) => (Array.isArray(value) ? "too_long" : "type"),
    ).optional(),
    sourceSession: checkedBy<string>((value) => assertSessionId(value, "sourceSession")).optional(),
  },
  rule("A fact query must be an object"),
);

/** Checks a list's or search's query (default: current facts, a page of {@link FACT_PAGE}, any source). */
export function parseFactQuery(query: FactQuery | undefined): FactFilter {
  const { status, limit, sourcesIn, sourceSession } = parseInput(factQuery, query ?? {});
  // Each id by the append path's own rule, without a schema's allocation per id: the list is an active path's.
  sourcesIn?.forEach((id, i) => {
    assertId(id, "A message id", `sourcesIn.${i}`);
  });
  return {
    status: status === undefined ? ["current"] : [...new Set(status)],
    limit: limit ?? FACT_PAGE,
    sourcesIn: sourcesIn === undefined ? undefined : [...new Set(sourcesIn as string[])],
    sourceSession,
  };
}

/** A page cursor: the store order of the last fact of the page before, written as a decimal. */
export function parseCursor(cursor: unknown): number | null {
  if (cursor === undefined || cursor === null) return null;
  if (
    typeof cursor !== "string" ||
    !/^[1-9][0-9]{0,15}$/.test(cursor) ||
    !Number.isSafeInteger(Number(cursor))
  ) {
    throw invalid("cursor must be a cursor a list returned", "cursor", "format");
  }
  return Number(cursor);
}

/** Checks a store order (`seq`) argument: a whole number ≥ 0. */
export function parseSeq(value: unknown, path: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(`${path} must be a whole number >= 0`, path, "range");
  }
  return value;
}

/** Checks an `unlearned` read's limit: 1 to {@link MAX_UNLEARNED}. */
export function parseUnlearnedLimit(value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_UNLEARNED) {
    throw invalid(`limit must be a whole number from 1 to ${MAX_UNLEARNED}`, "limit", "range");
  }
  return value;
}

/** Checks a lease holder's token (a stored name). */
export function parseHolder(holder: unknown): string {
  assertId(holder, "A learner's holder token", "holder");
  return holder;
}

/** Checks a time (ms since the epoch). */
export function parseTime(value: unknown, path: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(`${path} must be a whole number of ms since the epoch`, path, "type");
  }
  return value;
}

/** The scope a stored fact's key names. */
export function scopeOfKey(key: string): { owner: string | null; sessionId: string | null } {
  return key.startsWith("o:")
    ? { owner: key.slice(2), sessionId: null }
    : { owner: null, sessionId: key.slice(2) };
}

/** The text a fact is searched by, on every backend: whom it is about, then what it says. */
export function factSearchText(fact: { text: string; about: string | null }): string {
  return fact.about === null ? fact.text : `${fact.about}\n${fact.text}`;
}

/**
 * `filter` without its source-session condition when it names the scope's own session: a session's own facts all
 * have a source in it (add and import refuse any other), so the condition holds for each of them, and left out it
 * costs no source read per match.
 */
export function withoutOwnSession(key: ScopeKey, filter: FactFilter): FactFilter {
  return key.sessionId !== null && filter.sourceSession === key.sessionId && filter.sourcesIn === undefined
    ? { ...filter, sourceSession: undefined }
    : filter;
}
