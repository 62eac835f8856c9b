/**
 * An extractor's answer checked fact by fact: a fact out of schema, oversized, or naming a source outside its batch
 * is refused alone (counted, with a reason), and the batch's other facts are kept. Only an answer that is not a
 * list of facts at all fails the batch (which is then retried).
 */
import { z } from "zod";
import { MAX_FACT_SOURCES } from "../store/facts.js";
import type { FactAction } from "./types.js";

/** The longest fact text kept. */
export const MAX_FACT_CHARS = 1_000;
/** The longest `about`. */
export const MAX_ABOUT_CHARS = 200;
/** Facts kept from one batch; the rest are refused (counted). */
export const MAX_FACTS_PER_BATCH = 100;

/** A fact that passed the checks: its sources are ids of the batch's messages. */
export interface CheckedFact {
  text: string;
  about: string | null;
  sources: string[];
  action: FactAction | null;
  target: string | null;
}

/** What the check made of an answer. */
export interface CheckedAnswer {
  facts: CheckedFact[];
  /** Why each refused fact was refused (its index in the answer first). */
  refused: string[];
}

const fact = z.object({
  text: z
    .string()
    .transform((text) => text.trim())
    .pipe(
      z.string().min(1, "text is empty").max(MAX_FACT_CHARS, `text is over ${MAX_FACT_CHARS} characters`),
    ),
  about: z
    .string()
    .max(MAX_ABOUT_CHARS, `about is over ${MAX_ABOUT_CHARS} characters`)
    .nullish()
    .transform((about) => (about?.trim() ? about.trim() : null)),
  sources: z
    .array(z.string())
    .min(1, "it names no source")
    .max(MAX_FACT_SOURCES, `it names over ${MAX_FACT_SOURCES} sources`),
  action: z.enum(["add", "supersede", "invalidate", "duplicate"]).nullish(),
  target: z.string().nullish(),
});

/** The facts of an answer: a list, or an object with a `facts` list (a model's structured output). */
function listOf(answer: unknown): unknown[] {
  if (Array.isArray(answer)) return answer;
  const facts = (answer as { facts?: unknown } | null)?.facts;
  if (Array.isArray(facts)) return facts;
  throw new Error(
    `the extractor's answer is not a list of facts (${answer === null ? "null" : typeof answer})`,
  );
}

/** Checks `answer` against the batch whose message ids are `batchIds`. */
export function checkAnswer(answer: unknown, batchIds: ReadonlySet<string>): CheckedAnswer {
  const items = listOf(answer);
  const facts: CheckedFact[] = [];
  const refused: string[] = [];
  items.forEach((item, index) => {
    if (facts.length >= MAX_FACTS_PER_BATCH) {
      refused.push(`fact ${index}: over ${MAX_FACTS_PER_BATCH} facts in one batch`);
      return;
    }
    const parsed = fact.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      refused.push(
        `fact ${index}: ${issue ? `${issue.path.join(".") || "fact"}: ${issue.message}` : "invalid"}`,
      );
      return;
    }
    const value = parsed.data;
    const outside = value.sources.filter((id) => !batchIds.has(id));
    if (outside.length > 0) {
      refused.push(`fact ${index}: names sources outside its batch (${outside.slice(0, 3).join(", ")})`);
      return;
    }
    const action = value.action ?? null;
    const target = value.target ?? null;
    if (action !== null && action !== "add" && target === null) {
      refused.push(`fact ${index}: ${action} names no target`);
      return;
    }
    facts.push({
      text: value.text,
      about: value.about,
      sources: [...new Set(value.sources)],
      action,
      target,
    });
  });
  return { facts, refused };
}

/** The JSON Schema a model's structured output follows (every field required, nullable: strict-mode friendly). */
export const ANSWER_JSON_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["facts"],
  properties: {
    facts: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["text", "about", "sources", "action", "target"],
        properties: {
          text: { type: "string" },
          about: { type: ["string", "null"] },
          sources: { type: "array", items: { type: "string" } },
          action: { type: "string", enum: ["add", "supersede", "invalidate", "duplicate"] },
          target: { type: ["string", "null"] },
        },
      },
    },
  },
} as const;
