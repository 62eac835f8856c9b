// The learner's options, checked once (INVALID_ARGUMENT at the start rather than a failure in the background).
import { z } from "zod";
import { MAX_TIMEOUT_MS } from "../runtime/deadline.js";
import { parseInput } from "../schema/parse.js";
import { func, numberWhere } from "../schema/rules.js";
import { rule, says } from "../schema/to-session-error.js";
import { isLanguageModel } from "./extractor.js";
import type { Extractor, LearnOptions } from "./types.js";

/** Messages per batch by default, and at most. */
export const DEFAULT_WINDOW = 20;
export const MAX_WINDOW = 200;
/** Known facts shown per batch by default, and at most (the store's page size). */
export const DEFAULT_KNOWN_FACTS = 40;
export const MAX_KNOWN_FACTS = 100;

/** The options with every default filled in. */
export type LearnSettings = Required<Omit<LearnOptions, "prompt" | "producer" | "onError" | "onRefused">> &
  Pick<LearnOptions, "prompt" | "producer" | "onError" | "onRefused">;

const whole = (name: string, min: number, max: number) =>
  numberWhere(
    `${name} must be a whole number from ${min} to ${max}`,
    (n) => Number.isSafeInteger(n) && n >= min && n <= max,
  ).optional();

const schema = z.looseObject(
  {
    extractor: z.custom<Extractor>(
      (value) =>
        typeof value === "function" ||
        isLanguageModel(value) ||
        (typeof value === "string" && value.length > 0),
      says(
        'extractor must be a function (input) => facts, an AI SDK language model or a model id string ("openai/gpt-4.1-mini")',
        "type",
      ),
    ),
    prompt: z.string(rule("prompt must be a string")).min(1, rule("prompt must not be empty")).optional(),
    producer: z.string(rule("producer must be a string")).min(1).max(200).optional(),
    window: whole("window", 1, MAX_WINDOW),
    sittingGapMs: whole("sittingGapMs", 1, Number.MAX_SAFE_INTEGER),
    knownFacts: whole("knownFacts", 0, MAX_KNOWN_FACTS),
    timeoutMs: whole("timeoutMs", 1, MAX_TIMEOUT_MS),
    maxAttempts: whole("maxAttempts", 1, 100),
    retryDelayMs: whole("retryDelayMs", 0, MAX_TIMEOUT_MS),
    leaseMs: whole("leaseMs", 1, MAX_TIMEOUT_MS),
    onError: func("onError must be a function").optional(),
    onRefused: func("onRefused must be a function").optional(),
  },
  rule("learning options { extractor, … } must be an object"),
);

/** The background learner's `quietMs`: milliseconds, a whole number >= 0. */
export const quietMsSchema = numberWhere(
  "quietMs must be a whole number >= 0",
  (n) => Number.isSafeInteger(n) && n >= 0,
).optional();

/** The options checked (`INVALID_ARGUMENT`), the defaults filled in. */
export function learnSettings(options: LearnOptions): LearnSettings {
  parseInput(schema, options);
  const checked = options;
  const timeoutMs = checked.timeoutMs ?? 120_000;
  return {
    ...checked,
    window: checked.window ?? DEFAULT_WINDOW,
    sittingGapMs: checked.sittingGapMs ?? 30 * 60_000,
    knownFacts: checked.knownFacts ?? DEFAULT_KNOWN_FACTS,
    timeoutMs,
    maxAttempts: checked.maxAttempts ?? 3,
    retryDelayMs: checked.retryDelayMs ?? 1_000,
    // A lease outlives the extractor's deadline, so the holder renews it before another can take the session.
    leaseMs: checked.leaseMs ?? Math.max(5 * 60_000, timeoutMs * 2),
  };
}
