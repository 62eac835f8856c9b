import { z } from "zod";
import type { SessionStore } from "../contract/store.js";
import { SessionError, type SessionIssueRule } from "../errors.js";
import type { LearnOptions } from "../facts/types.js";
import { describe } from "../message/describe.js";
import { assertNamedSessionId } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { refusedBy } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
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

const named = (text: string) => `sessionMemory: ${text}`;

/** A whole number from 1 to `max` at `path`: a fraction or a non-number breaks `type`, one out of bounds `range`. */
const whole = (path: string, max: number) =>
  refusedBy<number>(
    (value) =>
      typeof value !== "number" || !Number.isInteger(value)
        ? named(`${path} must be a whole number, got ${describe(value)}`)
        : value < 1 || value > max
          ? named(`${path} must be 1 to ${max}, got ${value}`)
          : undefined,
    (value) => (typeof value === "number" && Number.isInteger(value) ? "range" : "type"),
  ).optional();

/** A session id the store can be asked for (assertNamedSessionId's rule and words). */
const sessionId = refusedBy<string>(
  (value) => {
    try {
      assertNamedSessionId(value);
      return undefined;
    } catch (error) {
      if (!(error instanceof SessionError)) throw error;
      return named(error.message);
    }
  },
  () => "format",
).optional();

const recall = z.preprocess(
  // `true` is every default, `false` none.
  (value) => (value === true ? {} : value === false ? undefined : value),
  z
    .object(
      {
        limit: whole("recall.limit", 20),
        maxChars: whole("recall.maxChars", 20_000),
        scope: z
          .enum(["session", "owner"], rule(named('recall.scope must be "session" or "owner"')))
          .optional(),
      },
      rule(named("recall must be a boolean or an object")),
    )
    .optional(),
);

/**
 * `sessionMemory`'s options. Each field's shape is its own schema; the source (a Session alone, or a store with a
 * session id) and `recall.scope: "owner"` depend on each other, so the object's check decides them.
 */
const optionsSchema = z
  .looseObject(
    {
      session: z
        .custom<Session>(
          (value) => value instanceof Session,
          rule(named("session must be a Session"), "type"),
        )
        .optional(),
      sessionId,
      owner: refusedBy<string>(
        (value) =>
          typeof value === "string" && value !== ""
            ? undefined
            : named(`owner must be a non-empty string, got ${describe(value)}`),
        () => "type",
      ).optional(),
      history: z
        .object(
          {
            maxMessages: whole("history.maxMessages", 10_000),
            maxTokens: whole("history.maxTokens", 10_000_000),
          },
          rule(named("history must be an object")),
        )
        .optional(),
      reminder: z.boolean(rule(named("reminder must be a boolean"))).optional(),
      recall,
    },
    rule(named("options must be an object")),
  )
  .check((ctx) => {
    const refuse = (path: string, message: string, kind: SessionIssueRule): void => {
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        path: path.split("."),
        message: named(message),
        params: { rule: kind },
      });
    };
    const given = ctx.value;
    if (given.session !== undefined) {
      const key = (["store", "sessionId", "owner"] as const).find((one) => given[one] !== undefined);
      if (key !== undefined)
        return refuse(
          key,
          `pass a Session alone, or a store with a sessionId (got session and ${key})`,
          "conflict",
        );
    } else if (typeof given.store !== "object" || given.store === null) {
      return refuse("store", "needs a session, or a store with a sessionId", "required");
    } else if (given.sessionId === undefined) {
      return refuse("sessionId", "needs a sessionId with the store", "required");
    }
    if (given.recall?.scope === "owner" && (given.owner === undefined || given.session !== undefined))
      refuse("recall.scope", 'recall.scope "owner" needs a store with an owner', "conflict");
  });

/** Checks `sessionMemory`'s options once, when the middleware is made: a mistake fails there, not on a call. */
export function memorySettings(options: SessionMemoryOptions): MemorySettings {
  const given = parseInput(optionsSchema, options);
  const source: MemorySettings["source"] =
    given.session !== undefined
      ? { kind: "session", session: given.session }
      : {
          kind: "store",
          store: given.store as SessionStore,
          sessionId: given.sessionId as string,
          owner: given.owner,
        };
  const recall = given.recall;
  return {
    source,
    history: {
      maxMessages: given.history?.maxMessages ?? 100,
      maxTokens: given.history?.maxTokens ?? 32_000,
    },
    reminder: given.reminder ?? true,
    recall:
      recall === undefined
        ? null
        : { limit: recall.limit ?? 3, maxChars: recall.maxChars ?? 2_000, scope: recall.scope ?? "session" },
    learning: learningOf(options, source),
  };
}

/** The learning `learn` asks for, checked now: bad options, a store without facts and the unnamed session refused. */
function learningOf(given: SessionMemoryOptions, source: MemorySettings["source"]): ChatLearning | null {
  if (given.learn === undefined) return null;
  return source.kind === "store"
    ? chatLearning(source.store, source.sessionId, given.learn, "sessionMemory")
    : chatLearning(storeOfSession(source.session), source.session.sessionId, given.learn, "sessionMemory");
}
