import type { SessionStore } from "../contract/store.js";
import { SessionError, type SessionIssue, type SessionIssueRule } from "../errors.js";
import type { LearnOptions } from "../facts/types.js";
import { describe } from "../message/describe.js";
import { assertNamedSessionId } from "../message/ids.js";
import { Session, storeOfSession } from "../session/session.js";
import { type ChatLearning, chatLearning } from "./learn.js";
import type { HistoryBudget } from "./memory-plan.js";
import type { RecallSettings } from "./memory-recall.js";

/** What `sessionMemory` takes: the conversation (a `Session`, or a store and an id) and what each call is given. */
export interface SessionMemoryOptions {
  /** The conversation; with owners, the owner's (`await manager.forOwner(user).open(id)`). */
  session?: Session | undefined;
  /** Or a store with `sessionId` (a SQLite path or handle also works through `Session.create`, not here). */
  store?: SessionStore | undefined;
  sessionId?: string | undefined;
  /**
   * With `store`: the session is opened as this owner's (`forOwner(owner).open(sessionId)`: registered as the
   * owner's when new, `NOT_FOUND` when it is another owner's), and `recall.scope: "owner"` searches their sessions.
   */
  owner?: string | undefined;
  /** How much stored history each call gets (default 100 messages and 32,000 estimated tokens). */
  history?: { maxMessages?: number | undefined; maxTokens?: number | undefined } | undefined;
  /** Whether the session's pending context reminder ends the latest user message (default true). */
  reminder?: boolean | undefined;
  /**
   * Recall hits for the call's latest user message, in a system message: `true`, or the number of hits (default
   * 3, at most 20), their characters (default 2,000, at most 20,000) and the sessions searched (`"session"`, the
   * default, or `"owner"`: every session of `owner`).
   */
  recall?:
    | boolean
    | {
        limit?: number | undefined;
        maxChars?: number | undefined;
        scope?: "session" | "owner" | undefined;
      }
    | undefined;
  /**
   * Learn facts from the conversation (`{ extractor, … }`, any `learnFacts` option; docs/FACTS.md, "Doors"): once a
   * call's answer is stored, the session's messages not learned yet are learned in the background, never on the
   * call's path (`middleware.learned()` waits for it). Needs a store with facts (a `Session` on one, or `store`).
   */
  learn?: LearnOptions | undefined;
}

/** The options checked, with their defaults. */
export interface MemorySettings {
  source:
    | { kind: "session"; session: Session }
    | { kind: "store"; store: SessionStore; sessionId: string; owner: string | undefined };
  history: HistoryBudget;
  reminder: boolean;
  recall: RecallSettings | null;
  /** The conversation's learning (`learn`), or null. */
  learning: ChatLearning | null;
}

function refuse(message: string, path: string, rule: SessionIssueRule): never {
  const issues: SessionIssue[] = [{ path, rule }];
  throw new SessionError("INVALID_ARGUMENT", `sessionMemory: ${message}`, { issues });
}

function whole(value: unknown, path: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    refuse(`${path} must be a whole number, got ${describe(value)}`, path, "type");
  }
  if (value < 1 || value > max) refuse(`${path} must be 1 to ${max}, got ${value}`, path, "range");
  return value;
}

function object(value: unknown, path: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object") {
    refuse(`${path} must be an object, got ${describe(value)}`, path, "type");
  }
  return value as Record<string, unknown>;
}

/** Checks `sessionMemory`'s options once, when the middleware is made: a mistake fails there, not on a call. */
export function memorySettings(options: SessionMemoryOptions): MemorySettings {
  const given = object(options, "options") as SessionMemoryOptions;
  const history = object(given.history, "history");
  if (given.reminder !== undefined && typeof given.reminder !== "boolean") {
    refuse(`reminder must be a boolean, got ${describe(given.reminder)}`, "reminder", "type");
  }
  const source = sourceOf(given);
  return {
    source,
    history: {
      maxMessages: whole(history.maxMessages, "history.maxMessages", 100, 10_000),
      maxTokens: whole(history.maxTokens, "history.maxTokens", 32_000, 10_000_000),
    },
    reminder: given.reminder ?? true,
    recall: recallOf(given),
    learning: learningOf(given, source),
  };
}

/** The learning `learn` asks for, checked now: bad options, a store without facts and the unnamed session refused. */
function learningOf(given: SessionMemoryOptions, source: MemorySettings["source"]): ChatLearning | null {
  if (given.learn === undefined) return null;
  return source.kind === "store"
    ? chatLearning(source.store, source.sessionId, given.learn, "sessionMemory")
    : chatLearning(storeOfSession(source.session), source.session.sessionId, given.learn, "sessionMemory");
}

function sourceOf(given: SessionMemoryOptions): MemorySettings["source"] {
  if (given.session !== undefined) {
    if (!(given.session instanceof Session)) refuse("session must be a Session", "session", "type");
    for (const key of ["store", "sessionId", "owner"] as const) {
      if (given[key] !== undefined) {
        refuse(`pass a Session alone, or a store with a sessionId (got session and ${key})`, key, "conflict");
      }
    }
    return { kind: "session", session: given.session };
  }
  const { store, sessionId, owner } = given;
  if (store === undefined || store === null || typeof store !== "object") {
    refuse("needs a session, or a store with a sessionId", "store", "required");
  }
  try {
    assertNamedSessionId(sessionId);
  } catch (error) {
    if (!(error instanceof SessionError)) throw error;
    refuse(error.message, "sessionId", sessionId === undefined ? "required" : "format");
  }
  if (owner !== undefined && (typeof owner !== "string" || owner === "")) {
    refuse(`owner must be a non-empty string, got ${describe(owner)}`, "owner", "type");
  }
  return { kind: "store", store, sessionId, owner };
}

function recallOf(given: SessionMemoryOptions): RecallSettings | null {
  const recall = given.recall;
  if (recall === undefined || recall === false) return null;
  const options = recall === true ? {} : object(recall, "recall");
  const scope = options.scope ?? "session";
  if (scope !== "session" && scope !== "owner") {
    refuse(`recall.scope must be "session" or "owner", got ${describe(scope)}`, "recall.scope", "one_of");
  }
  if (scope === "owner" && (given.owner === undefined || given.session !== undefined)) {
    refuse('recall.scope "owner" needs a store with an owner', "recall.scope", "conflict");
  }
  return {
    limit: whole(options.limit, "recall.limit", 3, 20),
    maxChars: whole(options.maxChars, "recall.maxChars", 2_000, 20_000),
    scope,
  };
}
