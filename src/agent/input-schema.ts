/** `createSession`'s options (the agent runtime, `agent-session/agent`), described once. */
import { z } from "zod";
import { assertNamedSessionId } from "../message/ids.js";
import { checkedBy, issueOf, wholeAtLeast } from "../schema/rules.js";
import { rule, says } from "../schema/to-session-error.js";
import { ownerId } from "../store/owner.js";
import { isObject } from "./checks.js";
import { normalize } from "./codec.js";
import { isSessionStorage } from "./storage/factory.js";
import { RESERVED_PREFIX } from "./turn-status.js";

const sessionId = checkedBy<string>(assertNamedSessionId).optional();

/** A price in dollars per million tokens: a number >= 0 (Infinity would make every cost infinite). */
const price = (name: string) => z.number(rule(`pricing.${name} must be a finite number >= 0`)).min(0);

/**
 * Prices: the input and output prices every cost needs, cache prices optional (they default to the input price),
 * no other keys, so a misspelt price is refused instead of every ledger entry's cost being lost.
 */
const pricing = z.strictObject(
  {
    inputPerMillion: price("inputPerMillion"),
    outputPerMillion: price("outputPerMillion"),
    cacheReadPerMillion: price("cacheReadPerMillion").optional(),
    cacheWritePerMillion: price("cacheWritePerMillion").optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `pricing has unknown keys ${issue.keys.map((key) => JSON.stringify(key)).join(", ")}: the prices are inputPerMillion, outputPerMillion, cacheReadPerMillion and cacheWritePerMillion`
        : rule("pricing must be an object of prices").error(issue as never),
  },
);

/** Metadata a caller may set: a JSON-storable object without the keys the runtime reserves ("agent.*"). */
const metadata = z
  .custom<Record<string, unknown>>(isObject, rule("metadata must be an object", "type"))
  .refine((value) => !Object.keys(value).some((key) => key.startsWith(RESERVED_PREFIX)), {
    params: { rule: "format" },
    // "agent.turn" drives recovery: a caller's value would make a new session look interrupted (or hide a real one).
    error: (issue) => {
      const key = Object.keys(issue.input as object).find((k) => k.startsWith(RESERVED_PREFIX));
      return `metadata key ${JSON.stringify(key)} uses the reserved prefix "${RESERVED_PREFIX}"`;
    },
  })
  // normalize throws its own error for a value JSON cannot hold.
  .check(issueOf(normalize, "type"));

const memory = z
  .custom<{ freezeSystemPrompt: unknown; reminder?: unknown }>(
    (value) => typeof (value as { freezeSystemPrompt?: unknown })?.freezeSystemPrompt === "function",
    says("memory must be a Session (with freezeSystemPrompt() and tools())", "type"),
  )
  .refine((value) => value.reminder === undefined || typeof value.reminder === "function", {
    error: () => "memory.reminder must be a function (a Session's reminder())",
    path: ["reminder"],
    params: { rule: "type" },
  });

/** The fields of a compaction's options; `prefix` names where they sit in the messages. */
const compactFields = (prefix: string) => ({
  keepLastMessages: wholeAtLeast(1, `${prefix}keepLastMessages`).optional(),
  instructions: z.string(rule(`${prefix}instructions must be a string`)).optional(),
});

/** `compact()`'s options; null or undefined means none. */
export const compactOptions = z
  .looseObject(compactFields(""), says("compact() options must be an object"))
  .nullish();

/** The options of `createSession` (and of `resumeSession` / `forkSession`, which set `resume` or `fork`). */
export const createAgentOptions = z
  .looseObject(
    {
      model: z.custom(
        (value) => value !== undefined && value !== null,
        says("createSession needs a model", "required"),
      ),
      resume: sessionId,
      fork: sessionId,
      sessionId,
      owner: ownerId().optional(),
      maxTurns: wholeAtLeast(1, "maxTurns").optional(),
      systemPrompt: z.string(rule("systemPrompt must be a string")).optional(),
      tools: z
        .custom(
          (value) => typeof value === "object" && value !== null,
          rule("tools must be an object of AI SDK tools", "type"),
        )
        .optional(),
      sessionStorage: z
        .custom(isSessionStorage, says("sessionStorage must have save, load, delete and list", "type"))
        .optional(),
      memory: memory.optional(),
      pricing: pricing.optional(),
      metadata: metadata.optional(),
      compaction: z
        .looseObject({
          maxInputTokens: z.custom(
            (value) => typeof value === "number" && value > 0,
            says("compaction.maxInputTokens must be a number > 0", "range"),
          ),
          ...compactFields("compaction."),
        })
        .optional(),
    },
    says("createSession needs an options object"),
  )
  .refine((options) => options.resume === undefined || options.fork === undefined, {
    error: () => "Use either resume or fork, not both",
    path: ["fork"],
    params: { rule: "conflict" },
  })
  // They name and describe a new session; a resumed one keeps its own, and dropping them silently would hide that.
  .refine((options) => options.resume === undefined || options.sessionId === undefined, {
    error: () => "sessionId is for a new session or fork: resume keeps the session's own id",
    path: ["sessionId"],
    params: { rule: "conflict" },
  })
  .refine((options) => options.resume === undefined || options.metadata === undefined, {
    error: () => "metadata is for a new session or fork: resume keeps the stored metadata",
    path: ["metadata"],
    params: { rule: "conflict" },
  });
