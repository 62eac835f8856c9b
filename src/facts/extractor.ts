// An extractor reduced to one call shape, whether it is a function or an AI SDK language model.
import { importOptional } from "../runtime/load.js";
import { ANSWER_JSON_SCHEMA } from "./check.js";
import { DEFAULT_FACT_PROMPT, renderBatch } from "./prompt.js";
import type { ExtractInput, Extractor, LanguageModelLike } from "./types.js";

/** An extractor as the learner calls it: its answer unchecked (check.ts checks it), and its producer's name. */
export interface ExtractCall {
  extract(input: ExtractInput): Promise<unknown>;
  producer: string;
}

/** True when `value` is an AI SDK language model rather than a function. */
export function isLanguageModel(value: unknown): value is LanguageModelLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<LanguageModelLike>).doGenerate === "function"
  );
}

type AiModule = {
  generateText(options: Record<string, unknown>): Promise<{ output: unknown }>;
  Output: { object(options: { schema: unknown }): unknown };
  jsonSchema(schema: unknown): unknown;
};

/**
 * The extractor as an {@link ExtractCall}. A model goes through `generateText` with `output: Output.object(...)`
 * from "ai" (6 or 7, imported on first use), the shipped prompt (or `prompt`) as its system prompt and the batch
 * as JSON in the user turn; the schema only guides the model (the AI SDK does not validate it), so that one bad
 * fact is refused alone by the check rather than failing the batch.
 */
export function extractCall(
  extractor: Extractor,
  options: { prompt?: string; producer?: string },
): ExtractCall {
  if (typeof extractor === "function") {
    const name = extractor.name || "anonymous";
    return { extract: (input) => extractor(input), producer: options.producer ?? `function:${name}` };
  }
  const system = options.prompt ?? DEFAULT_FACT_PROMPT;
  let ai: Promise<AiModule> | undefined;
  // A model id string is passed on as it is: the AI SDK resolves it (its global provider, else the gateway).
  const name = typeof extractor === "string" ? extractor : `${extractor.provider}/${extractor.modelId}`;
  return {
    producer: options.producer ?? `model:${name}`,
    extract: async (input) => {
      ai ??= importOptional<AiModule>("ai", "Learning facts with an AI SDK model");
      const { generateText, Output, jsonSchema } = await ai;
      const result = await generateText({
        model: extractor,
        system,
        prompt: renderBatch(input),
        output: Output.object({ schema: jsonSchema(ANSWER_JSON_SCHEMA) }),
        abortSignal: input.signal,
        // The learner retries a batch itself, with its backoff and its count of failures.
        maxRetries: 0,
      });
      return result.output;
    },
  };
}
