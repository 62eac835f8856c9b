/** `createSession`'s options (the agent runtime, `agent-session/agent`), described once. */
import { z } from "zod";
import { isObject } from "../agent/checks.js";
import { normalize } from "../agent/codec.js";
import { isSessionStorage } from "../agent/storage/factory.js";
import { RESERVED_PREFIX } from "../agent/turn-status.js";
import { describe } from "../message/describe.js";
import { assertNamedSessionId } from "../message/ids.js";
import { checkedBy, wholeAtLeast } from "./rules.js";
import { rule, says } from "./to-session-error.js";

const sessionId = checkedBy<string>(assertNamedSessionId).optional();

/** Prices in dollars per million tokens: every given price a number >= 0. */
const pricing = z.record(
  z.string(),
  z
    .number({
      error: (issue) =>
        `pricing.${String(issue.path?.at(-1))} must be a number >= 0, got ${describe(issue.input)}`,
    })
    .min(0)
    .optional(),
  rule("pricing must be an object of prices"),
);

/** Metadata a caller may set: a JSON-storable object without the keys the runtime reserves ("agent.*"). */
const metadata = z
  .custom<Record<string, unknown>>(isObject, rule("metadata must be an object"))
  .refine((value) => !Object.keys(value).some((key) => key.startsWith(RESERVED_PREFIX)), {
    // "agent.turn" drives recovery: a caller's value would make a new session look interrupted (or hide a real one).
    error: (issue) => {
      const key = Object.keys(issue.input as object).find((k) => k.startsWith(RESERVED_PREFIX));
      return `metadata key ${JSON.stringify(key)} uses the reserved prefix "${RESERVED_PREFIX}"`;
    },
  })
  .refine((value) => {
    normalize(value); // throws its own error for a value JSON cannot hold
    return true;
  });

const memory = z
  .custom<{ freezeSystemPrompt: unknown; reminder?: unknown }>(
    (value) => typeof (value as { freezeSystemPrompt?: unknown })?.freezeSystemPrompt === "function",
    says("memory must be a Session (with freezeSystemPrompt() and tools())"),
  )
  .refine((value) => value.reminder === undefined || typeof value.reminder === "function", {
    error: () => "memory.reminder must be a function (a Session's reminder())",
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
      model: z.custom((value) => value !== undefined && value !== null, says("createSession needs a model")),
      resume: sessionId,
      fork: sessionId,
      sessionId,
      maxTurns: wholeAtLeast(1, "maxTurns").optional(),
      systemPrompt: z.string(rule("systemPrompt must be a string")).optional(),
      tools: z
        .custom(
          (value) => typeof value === "object" && value !== null,
          rule("tools must be an object of AI SDK tools"),
        )
        .optional(),
      sessionStorage: z
        .custom(isSessionStorage, says("sessionStorage must have save, load, delete and list"))
        .optional(),
      memory: memory.optional(),
      pricing: pricing.optional(),
      metadata: metadata.optional(),
      compaction: z
        .looseObject({
          maxInputTokens: z.custom(
            (value) => typeof value === "number" && value > 0,
            says("compaction.maxInputTokens must be a number > 0"),
          ),
          ...compactFields("compaction."),
        })
        .optional(),
    },
    says("createSession needs an options object"),
  )
  .refine((options) => options.resume === undefined || options.fork === undefined, {
    error: () => "Use either resume or fork, not both",
  });
