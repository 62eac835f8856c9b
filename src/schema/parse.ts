/**
 * Parsing an input with its schema. Inputs off the append path (builder and store options, registry records,
 * usage, transfer records, `persistChatTurn` requests, `send()` input) are described as zod 4 schemas next to what
 * they describe and parsed here, the one way a schema's refusal becomes a `SessionError`. The append path's
 * message and Unicode checks stay hand-written in `message/`: they run on every write, where a schema's allocation
 * per field would show in the append benchmark.
 */
import { z } from "zod";
import { type ParseOptions, toSessionError } from "./to-session-error.js";

/** Parses `value` with `schema`, or throws the `SessionError` {@link toSessionError} makes of its issues. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  options: ParseOptions = {},
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // Parsed again to learn which messages zod worded itself (a foreign schema's, named by their path) and to keep
  // each issue's input (its rule: missing or of the wrong type): a per-parse error map makes every parse several
  // times slower (~5 µs more for a transfer record, which an import of a million records would pay), so only a
  // refused input pays it.
  const foreign = new Set<string>();
  const again = schema.safeParse(value, {
    reportInput: true,
    error: (issue) => {
      const text = z.core.config().localeError?.(issue);
      const message = typeof text === "string" ? text : (text?.message ?? "Invalid input");
      foreign.add(message);
      return message;
    },
  });
  throw toSessionError(again.success ? result.error : again.error, options, value, foreign);
}

export type { ParseOptions } from "./to-session-error.js";
