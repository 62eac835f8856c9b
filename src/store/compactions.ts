import { z } from "zod";
import type { CompactionDetails, StoredCompaction } from "../contract/message.js";
import { errorMessage } from "../errors.js";
import { describe } from "../message/describe.js";
import { assertId } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { checkedBy } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";

const messageId = (field: string) => checkedBy<string>((value) => assertId(value, field, field));

// A copy as JSON, as every backend stores it: what JSON cannot hold (a cycle, a throwing toJSON, a function) is
// refused here, not by a raw JSON error; the one serialisation both checks and copies.
const detailsCopy = z.unknown().transform((details, ctx): CompactionDetails => {
  let json: string | undefined;
  try {
    json = JSON.stringify(details);
  } catch (error) {
    ctx.issues.push({
      code: "custom",
      input: details,
      message: `Compaction details must be JSON: ${errorMessage(error)}`,
      params: { rule: "invalid" },
    });
    return z.NEVER;
  }
  if (json !== undefined) return JSON.parse(json) as CompactionDetails;
  ctx.issues.push({
    code: "custom",
    input: details,
    message: `Compaction details must be JSON, got ${describe(details)}`,
    params: { rule: "type" },
  });
  return z.NEVER;
});

/** The arguments of addCompaction (every backend). */
const compactionArgs = z.object({
  summary: z.string(rule("A compaction summary must be a string")),
  fromMessageId: messageId("fromMessageId"),
  toMessageId: messageId("toMessageId"),
  details: detailsCopy.optional(),
});

/** A new overlay record: validated arguments, a random id, an ISO timestamp and a copy of the details. */
export function newCompaction(
  summary: string,
  fromMessageId: string,
  toMessageId: string,
  details?: CompactionDetails,
): StoredCompaction {
  const parsed = parseInput(compactionArgs, {
    summary,
    fromMessageId,
    toMessageId,
    details: details || undefined,
  });
  const compaction: StoredCompaction = {
    id: crypto.randomUUID(),
    summary,
    fromMessageId,
    toMessageId,
    createdAt: new Date().toISOString(),
  };
  if (parsed.details !== undefined) compaction.details = parsed.details;
  return compaction;
}

/** A compaction as SQL backends store it. */
export interface CompactionRow {
  id: string;
  summary: string;
  from_message_id: string;
  to_message_id: string;
  details: string | null;
  created_at: string;
}

/** Converts a stored row to the public shape (details are kept as JSON text). */
export function toStoredCompaction(row: CompactionRow): StoredCompaction {
  const compaction: StoredCompaction = {
    id: row.id,
    summary: row.summary,
    fromMessageId: row.from_message_id,
    toMessageId: row.to_message_id,
    createdAt: row.created_at,
  };
  if (row.details !== null) compaction.details = JSON.parse(row.details) as CompactionDetails;
  return compaction;
}
