/**
 * What a search keeps of the items it read (docs/LANGGRAPH.md "Store"): a filter as LangGraph's InMemoryStore
 * compares (each top-level field against a value or the operators $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin), and a
 * text query in the house query language (search/query.ts: words, their families, "phrases"), every term required,
 * scored by its occurrences in the item's text (the value's strings, or those at the fields its put named).
 */
import { getTextAtPath } from "@langchain/langgraph-checkpoint";
import { parseQuery, type QueryTerm } from "../../search/query.js";
import { scoreText } from "../../search/score.js";

const OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);

// An object whose every key is an operator (the empty object too), as InMemoryStore's isFilterOperators reads it.
const isOperators = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && Object.keys(value).every((key) => OPERATORS.has(key));

/** True when `value` passes `filter`, compared exactly as InMemoryStore compares. */
export function passes(value: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([field, wanted]) => compare(value[field], wanted));
}

function compare(actual: unknown, wanted: unknown): boolean {
  if (!isOperators(wanted)) return actual === wanted;
  return Object.entries(wanted).every(([op, operand]) => {
    switch (op) {
      case "$eq":
        return actual === operand;
      case "$ne":
        return actual !== operand;
      case "$gt":
        return Number(actual) > Number(operand);
      case "$gte":
        return Number(actual) >= Number(operand);
      case "$lt":
        return Number(actual) < Number(operand);
      case "$lte":
        return Number(actual) <= Number(operand);
      case "$in":
        return Array.isArray(operand) ? operand.includes(actual) : false;
      default:
        return Array.isArray(operand) ? !operand.includes(actual) : true;
    }
  });
}

/** A query's terms (`INVALID_ARGUMENT` over the query limits), or undefined for none or a blank one. */
export function queryTerms(query: string | undefined): QueryTerm[] | undefined {
  if (query === undefined) return undefined;
  const terms = parseQuery(query);
  return terms.length > 0 ? terms : undefined;
}

/** The item's score for `terms` (0: no match): over its value's strings, or those at `fields` (`[]`: none). */
export function scoreItem(terms: QueryTerm[], value: Record<string, unknown>, fields: string | null): number {
  const paths = fields === null ? null : (JSON.parse(fields) as string[]);
  const texts = paths === null ? stringsOf(value) : paths.flatMap((path) => getTextAtPath(value, path));
  return texts.length === 0 ? 0 : scoreText(terms, texts.join("\n"));
}

function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (typeof value === "object" && value !== null)
    for (const item of Object.values(value)) stringsOf(item, out);
  return out;
}
