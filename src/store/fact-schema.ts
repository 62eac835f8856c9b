/**
 * A fact as `add` and `import` take it, and a list's or search's query, as schemas (parsed in facts.ts and
 * fact-import.ts): a refusal is `INVALID_ARGUMENT` at the field's path (`facts.0.text`, `facts.2.sources.0.messageId`,
 * `limit`). The id rules stay the append path's own (`message/ids.ts`), called as checks.
 */
import { z } from "zod";
import type { FactSource, FactStatus } from "../contract/facts.js";
import type { SessionIssueRule } from "../errors.js";
import { describe } from "../message/describe.js";
import { assertId, assertSessionId, fitsBytes, isStorableId } from "../message/ids.js";
import { checkedBy, refusedBy } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";

/** The statuses a fact can have. */
export const FACT_STATUSES: readonly FactStatus[] = ["current", "superseded", "invalidated"];

/** A fact id (a stored name), checked as every stored name is. */
export const factId = (what = "A fact id") => checkedBy<string>((value) => assertId(value, what, "id"));

/**
 * A fact's free text (`text`, `about`, `producer`): a string of well-formed Unicode without U+0000 within `max`
 * bytes. A blank or missing one is refused when `required`, else read as null.
 */
export function factText(words: string, max: number, required: boolean) {
  const broken = (value: unknown): SessionIssueRule | undefined => {
    if (value === undefined || value === null) return required ? "required" : undefined;
    if (typeof value !== "string") return "type";
    if (value.trim().length === 0) return required ? "required" : undefined;
    if (!isStorableId(value)) return "format";
    return fitsBytes(value, max) ? undefined : "too_long";
  };
  const says: Partial<Record<SessionIssueRule, string>> = {
    required: `${words} is required and must not be blank`,
    type: `${words} must be a string`,
    format: `${words} must be well-formed Unicode without U+0000`,
    too_long: `${words} must be at most ${max} bytes in UTF-8`,
  };
  return refusedBy<string | null | undefined>(
    (value) => {
      const kind = broken(value);
      return kind === undefined ? undefined : `${says[kind]}, got ${describe(value)}`;
    },
    (value) => broken(value) ?? "invalid",
  ).transform((value) => (typeof value === "string" && value.trim().length > 0 ? value : null));
}

/** A time in ms since the epoch: a whole number >= 0. */
export const epochMs = (words: string) =>
  refusedBy<number>(
    (value) =>
      typeof value === "number" && Number.isSafeInteger(value) && value >= 0
        ? undefined
        : `${words} must be a whole number of ms since the epoch, got ${describe(value)}`,
    (value) => (value === undefined ? "required" : "type"),
  );

/** A fact's sources: 1 to `max` messages, each named by its session and id; one named twice counts once. */
export const factSources = (max: number) =>
  refusedBy<unknown[]>(
    (value) =>
      !Array.isArray(value) || value.length === 0
        ? `A fact names at least one source message, got ${describe(value)}`
        : value.length > max
          ? `A fact names at most ${max} sources, got ${value.length}`
          : undefined,
    (value) =>
      value === undefined ? "required" : Array.isArray(value) && value.length > max ? "too_long" : "type",
  )
    .pipe(
      z.array(
        z.object(
          {
            sessionId: checkedBy<string>((value) => assertSessionId(value)),
            messageId: checkedBy<string>((value) => assertId(value, "A source message id", "messageId")),
          },
          rule("A source must be { sessionId, messageId }"),
        ),
      ),
    )
    .transform((sources): FactSource[] => {
      const seen = new Map<string, FactSource>();
      for (const { sessionId, messageId } of sources)
        seen.set(JSON.stringify([sessionId, messageId]), { sessionId, messageId });
      return [...seen.values()];
    });
