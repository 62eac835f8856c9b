/**
 * The record of whose a block or entry is (contract/context.ts ContextRecord): checked once here for every backend,
 * and turned into the two columns the SQL backends store it in (`session_id`, `owner`, at most one set).
 */

import { z } from "zod";
import type { ContextRecord } from "../contract/context.js";
import { describe } from "../message/describe.js";
import { assertNamedSessionId } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { checkedBy, refusedBy } from "../schema/rules.js";
import { parseOwner } from "../store/owner.js";

/** A record as its columns: the session id and the owner, at most one set (both null: no record). */
export type RecordParams = readonly [string | null, string | null];

/** The record as its two columns: a session id or an owner, the other null (both null: no record). */
export interface RecordColumns {
  sessionId: string | null;
  owner: string | null;
}

const isOneKey = (value: unknown): boolean => {
  if (typeof value !== "object" || value === null) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === "sessionId" || keys[0] === "owner");
};

/** A record: an object with one key, `sessionId` (a named session) or `owner` (an owner id). */
const recordSchema = refusedBy<object>(
  (value) =>
    isOneKey(value) ? undefined : `A record must be { sessionId } or { owner }, got ${describe(value)}`,
  () => "type",
).pipe(
  z.object({
    sessionId: checkedBy<string>((value) => assertNamedSessionId(value, "record.sessionId")).optional(),
    owner: checkedBy<string>((value) => parseOwner(value, "record.owner")).optional(),
  }),
);

/** `INVALID_ARGUMENT` unless `record` is undefined, `{ sessionId }` (a named session) or `{ owner }`. */
export function parseRecord(record: unknown): ContextRecord | undefined {
  if (record === undefined) return undefined;
  const { sessionId, owner } = parseInput(recordSchema, record, { path: "record" });
  return sessionId !== undefined ? { sessionId } : { owner: owner as string };
}

/** The columns of a record (no record: both null). */
export function recordColumns(record: ContextRecord | undefined): RecordColumns {
  if (record === undefined) return { sessionId: null, owner: null };
  return "sessionId" in record
    ? { sessionId: record.sessionId, owner: null }
    : { sessionId: null, owner: record.owner };
}

/** The columns of a record as the SQL backends' statements take them: `[session_id, owner]`. */
export function recordParams(record: ContextRecord | undefined): RecordParams {
  const { sessionId, owner } = recordColumns(record);
  return [sessionId, owner];
}

/** The record of a row's columns, or undefined when it has none. */
export function recordOf(
  sessionId: string | null | undefined,
  owner: string | null | undefined,
): ContextRecord | undefined {
  if (sessionId != null) return { sessionId };
  if (owner != null) return { owner };
  return undefined;
}

/** True when a row's record is `record` (same kind, same id). */
export function sameRecord(stored: ContextRecord | undefined, record: ContextRecord): boolean {
  if (stored === undefined) return false;
  if ("sessionId" in record) return "sessionId" in stored && stored.sessionId === record.sessionId;
  return "owner" in stored && stored.owner === record.owner;
}
