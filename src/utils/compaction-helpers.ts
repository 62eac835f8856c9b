import type { SessionMessage } from "../contract/message.js";
import { isCompactionMessage } from "../message/overlay.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { buildSummaryPrompt, computeSummaryBudget } from "./summary-prompt.js";
import { hasToolParts, isToolPart, partsOf, toolCallIdOf, toolCallIdsOf } from "./tool-parts.js";
import { countOption } from "./truncate.js";

// The reference's `compaction-helpers` module also carried the overlay-id helpers, so importers of this name find them.
export { COMPACTION_PREFIX, isCompactionMessage } from "../message/overlay.js";
export { buildSummaryPrompt, computeSummaryBudget } from "./summary-prompt.js";

/** Counts the tokens of the given messages (called with one message at a time while picking the tail). */
export type CompactTokenCounter = (messages: SessionMessage[]) => number | Promise<number>;

/** What a Session token counter receives; compaction passes one message, an empty prompt and no blocks. */
export interface CompactCounterInput {
  messages: SessionMessage[];
  systemPrompt: string;
  contextBlocks: unknown[];
}

/**
 * A Session token counter as the compaction function sees it. Declared through a method so its parameter is
 * checked bivariantly: a counter typed for the Session's concrete `ContextBlock[]` is accepted as well.
 */
export type CompactSessionTokenCounter = {
  count(input: CompactCounterInput): number | Promise<number>;
}["count"];

/** The second argument the Session passes to a compaction function. */
export interface CompactContext {
  /** The Session's own token counter, used for the tail when the options name none. */
  tokenCounter?: CompactSessionTokenCounter | undefined;
}

/** Options of `createCompactFunction`. */
export interface CompactOptions {
  /** Calls the model with the summary prompt and resolves to its text. */
  summarize: (prompt: string) => Promise<string>;
  /** Leading messages never compacted (default 3). */
  protectHead?: number;
  /** Tokens of recent messages kept verbatim (default 20000). */
  tailTokenBudget?: number;
  /** Recent messages always kept verbatim (default 2). */
  minTailMessages?: number;
  /** Token counter for the tail; defaults to the Session's counter, else the heuristic estimate. */
  tokenCounter?: CompactTokenCounter;
}

/** The range a compaction replaces and its summary. */
export interface CompactResult {
  fromMessageId: string;
  toMessageId: string;
  summary: string;
}

/** A compaction function as returned by `createCompactFunction` and registered on a Session. */
/** What a compaction would cover, computed without calling the model (for dry runs). */
export interface PlannedCompaction {
  fromMessageId: string;
  toMessageId: string;
  /** The messages that would be summarised (overlays excluded). */
  middle: SessionMessage[];
  previousSummary: string | null;
  summaryBudget: number;
}

/** The settings a compaction function made by `createCompactFunction` runs with, defaults filled in. */
export interface CompactSettings {
  protectHead: number;
  tailTokenBudget: number;
  minTailMessages: number;
}

/** A compaction function that can also say what it would compact without summarising. */
export type PlanningCompactFunction = CompactFunction & {
  plan(messages: SessionMessage[], context?: CompactContext): Promise<PlannedCompaction | null>;
  /** Its settings, which `compactAfter` checks the threshold against (set by `createCompactFunction`). */
  readonly settings?: CompactSettings;
};

export type CompactFunction = (
  messages: SessionMessage[],
  context?: CompactContext,
) => Promise<CompactResult | null>;

function isAssistantWithTools(message: SessionMessage | undefined): message is SessionMessage {
  return message !== undefined && message.role === "assistant" && hasToolParts(message);
}

/** True when a message has a tool part answering (or repeating) one of `callIds`. */
function answersCall(message: SessionMessage | undefined, callIds: ReadonlySet<string>): boolean {
  if (message === undefined || callIds.size === 0) return false;
  return partsOf(message).some((part) => {
    if (!isToolPart(part)) return false;
    const id = toolCallIdOf(part);
    return id !== undefined && callIds.has(id);
  });
}

/**
 * Moves a start boundary past the tool results that answer the assistant message just before it, so a call
 * and its results never land on different sides of the cut.
 */
export function alignBoundaryForward(messages: readonly SessionMessage[], index: number): number {
  if (index <= 0 || index >= messages.length) return index;
  const previous = messages[index - 1];
  if (!isAssistantWithTools(previous)) return index;
  const callIds = toolCallIdsOf(previous);
  let aligned = index;
  while (aligned < messages.length && answersCall(messages[aligned], callIds)) aligned++;
  return aligned;
}

/**
 * Moves an end boundary back while it sits on results of the assistant call just before it, so the call
 * stays together with its results in the kept tail.
 */
export function alignBoundaryBackward(messages: readonly SessionMessage[], index: number): number {
  if (index <= 0 || index >= messages.length) return index;
  let aligned = index;
  while (aligned > 0) {
    const current = messages[aligned];
    if (isAssistantWithTools(current)) break;
    const previous = messages[aligned - 1];
    if (!isAssistantWithTools(previous) || !answersCall(current, toolCallIdsOf(previous))) break;
    aligned--;
  }
  return aligned;
}

/** Applies the `minTailMessages` floor to a token-based cut and aligns it to tool groups. */
function finishTailCut(
  messages: readonly SessionMessage[],
  headEnd: number,
  tokenCut: number,
  minTailMessages: number,
): number {
  const minCut = messages.length - minTailMessages;
  return alignBoundaryBackward(messages, minCut >= headEnd ? Math.min(tokenCut, minCut) : tokenCut);
}

/**
 * Index where the verbatim tail starts: walks back from the end adding heuristic message estimates while they
 * fit `tailTokenBudget` (always at least one message), keeps at least `minTailMessages`, aligned to tool groups.
 */
export function findTailCutByTokens(
  messages: readonly SessionMessage[],
  headEnd: number,
  tailTokenBudget = 20_000,
  minTailMessages = 2,
): number {
  const n = messages.length;
  let accumulated = 0;
  let tokenCut = n;
  for (let i = n - 1; i >= headEnd; i--) {
    const tokens = estimateMessageTokens(messages.slice(i, i + 1));
    if (accumulated + tokens > tailTokenBudget && tokenCut < n) break;
    accumulated += tokens;
    tokenCut = i;
  }
  return finishTailCut(messages, headEnd, tokenCut, minTailMessages);
}

/** A custom count as a usable number: non-finite (or non-numeric) counts as 0, else rounded up and ≥ 0. */
function normaliseCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.ceil(value)) : 0;
}

/** `findTailCutByTokens` with a (possibly async) counter; counts only as many messages as the walk needs. */
async function findTailCutWithCounter(
  messages: readonly SessionMessage[],
  headEnd: number,
  counter: CompactTokenCounter,
  tailTokenBudget: number,
  minTailMessages: number,
): Promise<number> {
  const n = messages.length;
  let accumulated = 0;
  let tokenCut = n;
  for (let i = n - 1; i >= headEnd; i--) {
    const tokens = normaliseCount(await counter(messages.slice(i, i + 1)));
    if (accumulated + tokens > tailTokenBudget && tokenCut < n) break;
    accumulated += tokens;
    tokenCut = i;
  }
  return finishTailCut(messages, headEnd, tokenCut, minTailMessages);
}

/** The explicit counter, else the Session's counter adapted to one message at a time, else none (heuristic). */
function tailCounter(
  own: CompactTokenCounter | undefined,
  session: CompactSessionTokenCounter | undefined,
): CompactTokenCounter | undefined {
  if (own) return own;
  if (!session) return undefined;
  return (messages) => session({ messages, systemPrompt: "", contextBlocks: [] });
}

/** Text of an overlay message: its text parts joined by newlines. */
function overlayText(message: SessionMessage): string {
  const texts: string[] = [];
  for (const part of partsOf(message)) {
    if (part !== null && typeof part === "object" && (part as { type?: unknown }).type === "text") {
      const text = (part as { text?: unknown }).text;
      if (typeof text === "string") texts.push(text);
    }
  }
  return texts.join("\n");
}

/**
 * Builds the reference compaction function: keep `protectHead` messages and a token-budgeted tail verbatim,
 * summarise the middle (updating the previous overlay's summary if there is one) and return the range it covers.
 * It resolves to null when there is nothing to compact or the summary is blank; summariser errors propagate.
 */
export function createCompactFunction(options: CompactOptions): PlanningCompactFunction {
  if (options === null || typeof options !== "object" || typeof options.summarize !== "function") {
    throw new TypeError("createCompactFunction needs options with a summarize(prompt) function");
  }
  const protectHead = countOption(options.protectHead, 3);
  const minTailMessages = countOption(options.minTailMessages, 2);
  const tailTokenBudget =
    typeof options.tailTokenBudget === "number" && !Number.isNaN(options.tailTokenBudget)
      ? Math.max(0, options.tailTokenBudget)
      : 20_000;

  const plan = async (
    messages: SessionMessage[],
    context?: CompactContext,
  ): Promise<PlannedCompaction | null> => {
    if (messages.length <= protectHead + minTailMessages) return null;

    const counter = tailCounter(options.tokenCounter, context?.tokenCounter);
    const compressStart = alignBoundaryForward(messages, protectHead);
    const compressEnd = counter
      ? await findTailCutWithCounter(messages, compressStart, counter, tailTokenBudget, minTailMessages)
      : findTailCutByTokens(messages, compressStart, tailTokenBudget, minTailMessages);
    if (compressEnd <= compressStart) return null;

    // Overlays inside the range are summarised through the previous summary, never used as endpoints.
    const middle = messages
      .slice(compressStart, compressEnd)
      .filter((message) => !isCompactionMessage(message));
    const first = middle[0];
    const last = middle.at(-1);
    if (first === undefined || last === undefined) return null;
    const previous = messages.find(isCompactionMessage);
    return {
      fromMessageId: first.id,
      toMessageId: last.id,
      middle,
      previousSummary: previous ? overlayText(previous) : null,
      summaryBudget: computeSummaryBudget(middle),
    };
  };

  const compact = async (
    messages: SessionMessage[],
    context?: CompactContext,
  ): Promise<CompactResult | null> => {
    const planned = await plan(messages, context);
    if (!planned) return null;
    const prompt = buildSummaryPrompt(planned.middle, planned.previousSummary, planned.summaryBudget);
    const summary = await options.summarize(prompt);
    if (typeof summary !== "string") {
      // A non-string is a bug in the summariser; failing loudly beats storing nothing without a trace.
      throw new TypeError(`summarize() must resolve to a string, got ${typeof summary}`);
    }
    // A blank summary means the model produced nothing usable: null, as in the reference. Session.compact()
    // then resolves to null and automatic compaction warns; a custom function's blank summary is refused there.
    if (summary.trim().length === 0) return null;
    return { fromMessageId: planned.fromMessageId, toMessageId: planned.toMessageId, summary };
  };
  const settings: CompactSettings = { protectHead, tailTokenBudget, minTailMessages };
  return Object.assign(compact, { plan, settings: Object.freeze(settings) });
}
