// The viewer's `/api/facts`: a session's facts or an owner's, a bounded page at a time (docs/CLI.md, docs/FACTS.md).
import {
  type Fact,
  type FactCapableStore,
  type FactScope,
  type FactStatus,
  hasFactStore,
} from "../../contract/facts.js";
import type { SessionStore } from "../../contract/store.js";
import { CliError } from "../errors.js";
import { requireSession } from "../inspect/sessions.js";
import { optional, ownerParam, wholeParam } from "./params.js";

/** Facts a page of `/api/facts` holds unless its `limit` says otherwise. */
export const VIEWER_FACTS = 50;
/** Most facts a page holds: the fact store's own page. */
export const MAX_VIEWER_FACTS = 100;

const STATUSES: readonly FactStatus[] = ["current", "superseded", "invalidated"];

/** A fact as the page shows it: the stored fact, its times in ISO-8601. */
export type ViewerFact = Omit<Fact, "observedAt" | "createdAt"> & { observedAt: string; createdAt: string };

/** An answer of `/api/facts`. */
export interface ViewerFactPage {
  /** Whose facts: a session's (its own and its owner's sourced in it) or an owner's. */
  of: { sessionId: string; owner: string | null } | { owner: string };
  /** False on a store without a fact store: it keeps no facts (and `facts` is empty). */
  keepsFacts: boolean;
  status: FactStatus[];
  facts: ViewerFact[];
  /** The cursor of the next page; null when every fact of the request's kind was read. */
  next: string | null;
}

function shown(fact: Fact): ViewerFact {
  return {
    ...fact,
    observedAt: new Date(fact.observedAt).toISOString(),
    createdAt: new Date(fact.createdAt).toISOString(),
  };
}

/** `status` (repeatable): the statuses read, `current` when none is given. */
function statusParam(query: URLSearchParams): FactStatus[] {
  const given = query.getAll("status").filter((s) => s !== "");
  for (const value of given) {
    if (!(STATUSES as readonly string[]).includes(value)) {
      throw new CliError(
        `the "status" parameter must be "current", "superseded" or "invalidated", got ${JSON.stringify(value)}`,
        "INVALID_ARGUMENT",
      );
    }
  }
  return given.length === 0 ? ["current"] : [...new Set(given as FactStatus[])];
}

/**
 * A session page's cursor: `s:` (the session's own facts) or `o:` (its owner's), and the store's cursor within
 * that scope (empty: its first page). It names no scope: the scope always comes from the checked request.
 */
function parseCursor(value: string | undefined): { phase: "s" | "o"; at: string | null } {
  if (value === undefined) return { phase: "s", at: null };
  const match = /^([so]):([1-9][0-9]{0,15})?$/.exec(value);
  if (!match) {
    throw new CliError(`the "cursor" parameter must be a cursor a page returned`, "INVALID_ARGUMENT");
  }
  return { phase: match[1] as "s" | "o", at: match[2] ?? null };
}

/**
 * `/api/facts`: with `id`, the session's facts (its own scope, then its owner's facts with a source in it); without,
 * `owner`'s facts. The session is checked as every per-session route checks it (another owner's than `owner` is
 * 404), and an owner's page reads the `{ owner }` scope only, so no request reads another owner's facts.
 */
export async function viewerFacts(store: SessionStore, query: URLSearchParams): Promise<ViewerFactPage> {
  const status = statusParam(query);
  const limit = wholeParam(query, "limit", 1, MAX_VIEWER_FACTS) ?? VIEWER_FACTS;
  const cursor = optional(query, "cursor");
  const owner = ownerParam(query);
  const id = query.get("id");
  if (id === null) {
    if (owner === undefined)
      throw new CliError(`the "id" or the "owner" parameter is required`, "INVALID_ARGUMENT");
    const of = { owner };
    if (!hasFactStore(store)) return { of, keepsFacts: false, status, facts: [], next: null };
    // The store checks its own cursor (a bad one is INVALID_ARGUMENT, 400).
    const page = await store.facts.list(of, { status, limit, cursor: cursor ?? null });
    return { of, keepsFacts: true, status, facts: page.facts.map(shown), next: page.next };
  }
  const summary = await requireSession(store, id, owner);
  const of = { sessionId: id, owner: summary.owner ?? null };
  if (!hasFactStore(store)) return { of, keepsFacts: false, status, facts: [], next: null };
  const page = await sessionFacts(store, of, status, limit, parseCursor(cursor));
  return { of, keepsFacts: true, status, ...page };
}

/**
 * The session's own facts, then its owner's that name a message of it as a source (the store's `sourceSession`
 * filter, in its read: no fact of the owner's other sessions is read), each a store page of at most the room left.
 */
async function sessionFacts(
  store: FactCapableStore,
  of: { sessionId: string; owner: string | null },
  status: FactStatus[],
  limit: number,
  cursor: { phase: "s" | "o"; at: string | null },
): Promise<{ facts: ViewerFact[]; next: string | null }> {
  const facts: Fact[] = [];
  let { at } = cursor;
  if (cursor.phase === "s") {
    const page = await store.facts.list({ sessionId: of.sessionId }, { status, limit, cursor: at });
    facts.push(...page.facts);
    if (page.next !== null) return { facts: facts.map(shown), next: `s:${page.next}` };
    at = null;
  }
  if (of.owner === null || facts.length === limit) {
    // A full page of the session's own facts: the owner's start on the next page.
    return { facts: facts.map(shown), next: of.owner === null ? null : "o:" };
  }
  const scope: FactScope = { owner: of.owner };
  const query = { status, limit: limit - facts.length, cursor: at, sourceSession: of.sessionId };
  const page = await store.facts.list(scope, query);
  facts.push(...page.facts);
  return { facts: facts.map(shown), next: page.next === null ? null : `o:${page.next}` };
}
