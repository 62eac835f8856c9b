import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { MISSING_RESULT_TEXT } from "../message/missing-result.js";
import { isCompactionMessage } from "../message/overlay.js";
import { estimateMessageTokens } from "../message/tokens.js";
import type { Session } from "../session/session.js";
import { keyOf, toPrompt } from "./memory-messages.js";
import type { Prompt } from "./memory-types.js";

type Part = Record<string, unknown> & { type: string };

/** How much stored history one call is given. */
export interface HistoryBudget {
  maxMessages: number;
  maxTokens: number;
}

/** One model call as the memory sees it: what the model gets and what is stored once it answered. */
export interface CallPlan {
  /** The stored path's newest message: what the call's messages go under (null: the session is empty). */
  parentId: string | null;
  /** The app's messages the store does not hold yet, in order (user messages, tool results). */
  fresh: Prompt[];
  /** The app's system messages, in order (they lead the prompt, as some providers require). */
  system: Prompt[];
  /** The stored history, then the app's other messages; tool calls left without a result closed. */
  messages: Prompt[];
  /** Ids of the stored messages in `messages` (recall leaves them out: the model reads them already). */
  historyIds: Set<string>;
  /** True when older messages of the path were left out by the budget. */
  truncated: boolean;
}

/**
 * Plans one call: reads the newest messages of the active path (at most what may match the app's prompt plus the
 * budget, plus one to tell whether more exist), finds the app's messages the store already holds — the longest
 * run at the start of the app's prompt equal to the path's newest messages, as when the SDK's next step repeats
 * the step before, or the app passes the whole history — and keeps the newest stored messages before them that
 * fit the budget. An assistant message among the app's new ones is refused: the answers are the store's to keep.
 */
export async function planCall(
  session: Session,
  appPrompt: readonly Prompt[],
  budget: HistoryBudget,
): Promise<CallPlan> {
  const system = appPrompt.filter((message) => message.role === "system");
  const given = appPrompt.filter((message) => message.role !== "system");
  const { read, leaf, more } = await readTail(session, given.length + budget.maxMessages);
  const held = matched(given, read);
  const fresh = given.slice(held);
  const stray = fresh.findIndex((message) => message.role === "assistant");
  if (stray >= 0) {
    throw new SessionError(
      "CONFLICT",
      "sessionMemory: the prompt holds an assistant message the session has not stored; pass only the new user " +
        "message (the memory prepends the stored history), or the stored history unchanged followed by it",
      { issues: [{ path: `prompt.${appPrompt.indexOf(fresh[stray]!)}`, rule: "conflict" }] },
    );
  }
  const { history, truncated } = withinBudget(read.slice(held), budget, more);
  const parentId = leaf === null || !isCompactionMessage(leaf) ? (leaf?.id ?? null) : await leafId(session);
  const messages = closeOpenCalls([...history.map((entry) => entry.prompt), ...given]);
  const historyIds = new Set([...history, ...read.slice(0, held)].map((entry) => entry.stored.id));
  return { parentId, fresh, system, messages, historyIds, truncated };
}

/** The stored leaf's id when the newest message read is an overlay (a summary has no stored id to go under). */
async function leafId(session: Session): Promise<string | null> {
  return (await session.getLatestLeaf())?.id ?? null;
}

interface Tail {
  /** Newest first, as prompt messages with their stored form. */
  read: Array<{ prompt: Prompt; stored: SessionMessage; key: string }>;
  leaf: SessionMessage | null;
  more: boolean;
}

/**
 * The newest sendable messages of the active path, newest first, from at most `limit` rows read from the leaf in
 * bounded batches, and one more to tell whether the path goes on (an empty message counts as a row: it bounds the
 * read, not the window).
 */
async function readTail(session: Session, limit: number): Promise<Tail> {
  const read: Tail["read"] = [];
  let leaf: SessionMessage | null = null;
  let rows = 0;
  for await (const stored of session.history({ newestFirst: true, batchSize: Math.min(limit + 1, 100) })) {
    if (rows++ === limit) return { read, leaf, more: true };
    leaf ??= stored;
    const prompt = toPrompt(stored);
    if (prompt !== null) read.push({ prompt, stored, key: keyOf(prompt) });
  }
  return { read, leaf, more: false };
}

/** How many messages at the start of `given` are the path's newest, in order (the longest such run). */
function matched(given: readonly Prompt[], read: Tail["read"]): number {
  const keys = given.map(keyOf);
  for (let held = Math.min(given.length, read.length); held > 0; held--) {
    let same = true;
    for (let i = 0; i < held && same; i++) same = keys[held - 1 - i] === read[i]!.key;
    if (same) return held;
  }
  return 0;
}

/**
 * The newest of `read` (newest first) within the budget, oldest first, starting at a user message: a tool result
 * or an answer whose question was cut would be read without what it answers.
 */
function withinBudget(
  read: Tail["read"],
  budget: HistoryBudget,
  more: boolean,
): { history: Tail["read"]; truncated: boolean } {
  let tokens = 0;
  let kept = 0;
  while (kept < read.length && kept < budget.maxMessages) {
    const cost = estimateMessageTokens([read[kept]!.stored]);
    if (tokens + cost > budget.maxTokens) break;
    tokens += cost;
    kept++;
  }
  const history = read.slice(0, kept).reverse();
  const truncated = more || kept < read.length;
  if (!truncated) return { history, truncated };
  const start = history.findIndex((entry) => entry.prompt.role === "user");
  return { history: start < 0 ? [] : history.slice(start), truncated };
}

/**
 * The messages with every tool call that has no result before the next message closed by an error result (the
 * agent runtime's wording): a history whose answer stopped at a call, or whose call the app never answered, is
 * otherwise refused by providers. A call in the last message is left open: its results are the app's next step.
 */
function closeOpenCalls(messages: Prompt[]): Prompt[] {
  const out: Prompt[] = [];
  messages.forEach((message, i) => {
    out.push(message);
    if (message.role !== "assistant" || i === messages.length - 1) return;
    const parts = message.content as unknown as Part[];
    const next = messages[i + 1];
    const answered = new Set(
      [...parts, ...(next?.role === "tool" ? (next.content as unknown as Part[]) : [])]
        .filter((part) => part.type === "tool-result")
        .map((part) => part.toolCallId),
    );
    const open = parts.filter(
      (part) => part.type === "tool-call" && part.providerExecuted !== true && !answered.has(part.toolCallId),
    );
    if (open.length === 0) return;
    const results = open.map((call) => ({
      type: "tool-result",
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      output: { type: "error-text", value: MISSING_RESULT_TEXT },
    }));
    if (next?.role === "tool") {
      // Merged into the app's own result message, so a provider still reads one result message per answer.
      messages[i + 1] = { ...next, content: [...results, ...next.content] } as Prompt;
    } else {
      out.push({ role: "tool", content: results } as unknown as Prompt);
    }
  });
  return out;
}
