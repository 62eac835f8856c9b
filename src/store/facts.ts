/**
 * What a fact store accepts: a scope, a new fact, a query, a cursor, a lease, each checked the same way on every
 * backend before any statement runs, so bad input is a `SessionError` with its path, never a partial write.
 */
import type { FactQuery, FactSource, FactStatus, NewFact } from "../contract/facts.js";
import { SessionError } from "../errors.js";
import { assertId, assertSessionId, fitsBytes, isStorableId, MAX_NAME_BYTES } from "../message/ids.js";
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

const STATUSES: readonly FactStatus[] = ["current", "superseded", "invalidated"];

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

function parseText(value: unknown, path: string, max: number, required: boolean): string | null {
  if (value === undefined || value === null) {
    if (required) throw invalid(`${path} is required`, path, "required");
    return null;
  }
  if (typeof value !== "string") throw invalid(`${path} must be a string`, path, "type");
  if (value.trim().length === 0) {
    if (required) throw invalid(`${path} must not be blank`, path, "required");
    return null;
  }
  if (!isStorableId(value))
    throw invalid(`${path} must be well-formed Unicode without U+0000`, path, "format");
  if (!fitsBytes(value, max))
    throw invalid(`${path} must be at most ${max} bytes in UTF-8`, path, "too_long");
  return value;
}

function parseSources(value: unknown, path: string): FactSource[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalid(
      "A fact names at least one source message",
      path,
      value === undefined ? "required" : "type",
    );
  }
  if (value.length > MAX_FACT_SOURCES) {
    throw invalid(`A fact names at most ${MAX_FACT_SOURCES} sources`, path, "too_long");
  }
  const seen = new Set<string>();
  const sources: FactSource[] = [];
  value.forEach((source: unknown, i) => {
    const { sessionId, messageId } = (source ?? {}) as Partial<Record<keyof FactSource, unknown>>;
    assertSessionId(sessionId, `${path}.${i}.sessionId`);
    assertId(messageId, "A source message id", `${path}.${i}.messageId`);
    const key = JSON.stringify([sessionId, messageId]);
    if (seen.has(key)) return; // named twice: one source
    seen.add(key);
    sources.push({ sessionId, messageId });
  });
  return sources;
}

/** Checks the facts of one `add` and gives each its id (a random UUID when left out); ids must differ. */
export function parseNewFacts(facts: unknown): FactDraft[] {
  if (!Array.isArray(facts)) throw invalid("facts must be an array", "facts", "type");
  if (facts.length > MAX_FACTS_PER_ADD) {
    throw invalid(`One add stores at most ${MAX_FACTS_PER_ADD} facts`, "facts", "too_long");
  }
  const ids = new Set<string>();
  return facts.map((fact: unknown, i) => {
    const draft = parseNewFact(fact, `facts.${i}`);
    if (ids.has(draft.id)) throw invalid(`Fact id "${draft.id}" is given twice`, `facts.${i}.id`, "format");
    ids.add(draft.id);
    return draft;
  });
}

/** Checks one new fact at `path` and gives it its id (a random UUID when left out). */
export function parseNewFact(fact: unknown, path: string): FactDraft {
  if (typeof fact !== "object" || fact === null) throw invalid("A fact must be an object", path, "type");
  const given = fact as Partial<Record<keyof NewFact, unknown>>;
  const id = given.id === undefined ? crypto.randomUUID() : parseFactId(given.id, `${path}.id`);
  const observedAt = given.observedAt;
  if (typeof observedAt !== "number" || !Number.isSafeInteger(observedAt) || observedAt < 0) {
    throw invalid("observedAt must be a whole number of ms since the epoch", `${path}.observedAt`, "type");
  }
  return {
    id,
    text: parseText(given.text, `${path}.text`, MAX_FACT_BYTES, true) as string,
    about: parseText(given.about, `${path}.about`, MAX_NAME_BYTES, false),
    observedAt,
    sources: parseSources(given.sources, `${path}.sources`),
    producer: parseText(given.producer, `${path}.producer`, MAX_NAME_BYTES, true) as string,
  };
}

/** Checks a list's or search's query (default: current facts, a page of {@link FACT_PAGE}, any source). */
export function parseFactQuery(query: FactQuery | undefined): FactFilter {
  const { status, limit, sourcesIn, sourceSession } = (query ?? {}) as Partial<
    Record<keyof FactQuery, unknown>
  >;
  let statuses: readonly FactStatus[] = ["current"];
  if (status !== undefined) {
    if (!Array.isArray(status) || status.some((s) => !STATUSES.includes(s as FactStatus))) {
      throw invalid(`status must list some of ${STATUSES.join(", ")}`, "status", "one_of");
    }
    statuses = [...new Set(status as FactStatus[])];
  }
  let max = FACT_PAGE;
  if (limit !== undefined) {
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 0 || limit > FACT_PAGE) {
      throw invalid(`limit must be a whole number from 0 to ${FACT_PAGE}`, "limit", "range");
    }
    max = limit;
  }
  let ids: string[] | undefined;
  if (sourcesIn !== undefined) {
    if (!Array.isArray(sourcesIn))
      throw invalid("sourcesIn must be an array of message ids", "sourcesIn", "type");
    if (sourcesIn.length > MAX_SOURCES_IN) {
      throw invalid(`sourcesIn names at most ${MAX_SOURCES_IN} message ids`, "sourcesIn", "too_long");
    }
    sourcesIn.forEach((id, i) => {
      assertId(id, "A message id", `sourcesIn.${i}`);
    });
    ids = [...new Set(sourcesIn as string[])];
  }
  if (sourceSession !== undefined) assertSessionId(sourceSession, "sourceSession");
  return { status: statuses, limit: max, sourcesIn: ids, sourceSession: sourceSession as string | undefined };
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
