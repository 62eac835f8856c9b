/**
 * The SDK's optional `applyHistoryTransaction` (`SessionHistoryTransactionAwareSession`, @openai/agents-core 0.20):
 * a history change the runner may retry under one operation id, applied at most once. With it the runner stores
 * what it keeps of a turn an output guardrail blocked (the input, tool calls that already ran) in one write.
 *
 * - `append_items`: the items as one all-or-nothing chain after the latest leaf (`Session.appendMessages`).
 * - `replace_suffix`: the newest items of the path must equal `expectedSuffix`, else `CONFLICT` and nothing
 *   changes; the replacement is stored as a new branch beside them (under the message before the suffix), in one
 *   step, so the path reads the replacement and the replaced items stay as an older branch, as a regenerate
 *   leaves its answer. An empty replacement of a suffix would leave the path on a message with replies while
 *   keeping them, and only a delete moves the tip back up: `UNSUPPORTED`.
 *
 * The operation id and a hash of the transaction are stored with its last item (`metadata.openaiAgentsOperation`),
 * in the same write, so a retry finds them: the same transaction again changes nothing, another one under the
 * same id is `CONFLICT`. A retry is looked for among the newest {@link RETRY_WINDOW} items of the path (the runner
 * retries at once); an empty append stores nothing and so records nothing (repeating it changes nothing either).
 */
import type { AgentInputItem } from "@openai/agents-core";
import { z } from "zod";
import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import { sha256Base64url } from "../runtime/bytes.js";
import { parseInput } from "../schema/parse.js";
import { refusedBy } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import type { Session } from "../session/session.js";
import { appendItems } from "./append.js";
import { encodeBytes } from "./bytes.js";
import { itemToMessage, messageToItem } from "./items.js";

/** The metadata key of the operation a stored item ended. */
export const OPERATION_KEY = "openaiAgentsOperation";

/** How many of the newest items a retried operation is looked for in (besides the suffix it may replace). */
export const RETRY_WINDOW = 64;

type Transaction =
  | { type: "append_items"; items: AgentInputItem[] }
  | { type: "replace_suffix"; expectedSuffix: AgentInputItem[]; replacement: AgentInputItem[] };

/** Applies one transaction (see the module comment); `newId` names each stored item. */
export async function applyTransaction(session: Session, args: unknown, newId: () => string): Promise<void> {
  const { operationId, transaction } = parseArgs(args);
  const hash = sha256Base64url(canonical(transaction));
  const suffix = transaction.type === "replace_suffix" ? transaction.expectedSuffix.length : 0;
  // The newest messages, one more than the suffix so its parent is known (fewer: the path starts in them).
  const wanted = RETRY_WINDOW + suffix + 1;
  const { messages } = await session.getRecentHistory(0, wanted);
  const tail = messages.slice(-wanted);
  const done = tail.find((message) => operationOf(message)?.id === operationId);
  if (done) {
    if (operationOf(done)?.hash === hash) return;
    throw new SessionError(
      "CONFLICT",
      `History operation "${operationId}" was already applied with a different transaction`,
      { issues: [{ path: "operationId", rule: "conflict" }] },
    );
  }
  const items = transaction.type === "append_items" ? transaction.items : transaction.replacement;
  if (items.length === 0 && suffix === 0) return;
  if (items.length === 0) {
    throw new SessionError(
      "UNSUPPORTED",
      "replace_suffix with an empty replacement: the path would end on a message with replies",
      { issues: [{ path: "transaction.replacement", rule: "range" }] },
    );
  }
  const stored = items.map((item) => itemToMessage(item, newId()));
  const last = stored[stored.length - 1]!;
  last.metadata = { ...(last.metadata as object), [OPERATION_KEY]: { id: operationId, hash } };
  if (transaction.type === "append_items") return appendItems(session, stored);
  const current = tail.slice(tail.length - suffix);
  if (
    current.length < suffix ||
    canonical(current.map(messageToItem)) !== canonical(transaction.expectedSuffix)
  ) {
    throw new SessionError("CONFLICT", "The newest items no longer match the transaction's expectedSuffix", {
      issues: [{ path: "transaction.expectedSuffix", rule: "conflict" }],
    });
  }
  const before = tail[tail.length - suffix - 1];
  await appendItems(session, stored, before === undefined ? null : before.id);
}

function operationOf(message: SessionMessage): { id?: unknown; hash?: unknown } | undefined {
  const metadata = message.metadata as Record<string, unknown> | undefined;
  const operation = metadata?.[OPERATION_KEY];
  return typeof operation === "object" && operation !== null ? operation : undefined;
}

/** JSON with sorted keys and bytes as tagged base64: equal for items equal in content, whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(sorted(encodeBytes(value)));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, sorted(record[key])]),
  );
}

/** A list of items at `path`: an array of objects (the SDK's items, stored as they come). */
const itemList = (path: string) =>
  z.array(
    z.custom<AgentInputItem>(
      (value) => typeof value === "object" && value !== null,
      rule(`each of ${path} must be an item (an object)`, "type"),
    ),
    rule(`${path} must be an array of items`),
  );

/** `applyHistoryTransaction`'s arguments: a non-blank operation id and a transaction of a known type. */
const argsSchema = z.object(
  {
    operationId: refusedBy<string>(
      (value) =>
        typeof value === "string" && value.trim() !== ""
          ? undefined
          : `operationId must be a non-empty string, got ${describe(value)}`,
      (value) => (value === undefined ? "required" : typeof value === "string" ? "format" : "type"),
    ),
    transaction: z.discriminatedUnion(
      "type",
      [
        z.object({ type: z.literal("append_items"), items: itemList("transaction.items") }),
        z.object({
          type: z.literal("replace_suffix"),
          expectedSuffix: itemList("transaction.expectedSuffix"),
          replacement: itemList("transaction.replacement"),
        }),
      ],
      {
        error: (issue) =>
          issue.code === "invalid_union"
            ? `Unknown transaction type ${describe((issue.input as { type?: unknown }).type)}: use "append_items" or "replace_suffix"`
            : `transaction must be an object, got ${describe(issue.input)}`,
      },
    ),
  },
  rule("applyHistoryTransaction needs { operationId, transaction }"),
);

/** The arguments, checked before anything is read or written. */
function parseArgs(args: unknown): { operationId: string; transaction: Transaction } {
  return parseInput(argsSchema, args);
}
