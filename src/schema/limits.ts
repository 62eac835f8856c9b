/** Size and cost limits given as options: a message cap, the memory tools' output limits, search query limits. */
import { z } from "zod";
import { wholeAtLeast } from "./rules.js";
import { rule } from "./to-session-error.js";

/** The smallest `maxOutputChars` or `maxHitChars` accepted: below it a truncation marker would crowd out the content. */
export const MIN_OUTPUT_CHARS = 500;

/** A byte cap (`maxMessageBytes`, `maxRowBytes`): a whole number >= 1024, or Infinity for none. */
export const byteCap = (field: string) =>
  z.custom<number>(
    (value) =>
      typeof value === "number" &&
      (value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 1024)),
    rule(`${field} must be a whole number >= 1024`, "range"),
  );

/** A Session's `maxMessageBytes` (option and `withMaxMessageBytes`). */
export const maxMessageBytes = byteCap("maxMessageBytes");

const keysRule = rule("reservedMetadataKeys must be an array of strings");

/** A store's or a Session's write-policy options (`WritePolicyOptions`). */
export const writePolicyOptions = z.object({
  reservedMetadataKeys: z.array(z.string(keysRule), keysRule).optional(),
  maxMessageBytes: maxMessageBytes.optional(),
});

/** `withToolOutputLimits` / `tools()` limits; an absent field keeps its current value. */
export const toolOutputLimitsSchema = z.object(
  {
    maxHitChars: wholeAtLeast(MIN_OUTPUT_CHARS, "maxHitChars").optional(),
    maxOutputChars: wholeAtLeast(MIN_OUTPUT_CHARS, "maxOutputChars").optional(),
  },
  rule("Tool output limits must be an object"),
);

/** A store's `queryLimits` option; an absent field keeps its default. */
export const queryLimitsSchema = z.object(
  {
    maxQueryChars: wholeAtLeast(1, "queryLimits.maxQueryChars").optional(),
    maxQueryTerms: wholeAtLeast(1, "queryLimits.maxQueryTerms").optional(),
  },
  rule("queryLimits must be an object"),
);
