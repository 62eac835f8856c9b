import { DEFAULT_TOOL_OUTPUT_LIMITS, type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import type {
  ContextConfig,
  SearchProvider,
  SessionContextOptions,
  WritableContextProvider,
} from "../context/types.js";
import { SessionError } from "../errors.js";
import {
  compactFunction,
  compactionErrorHandler,
  compactionThreshold,
  contextOptions,
  newBlockLabel,
  promptStore,
} from "../schema/options.js";
import { parseInput } from "../schema/to-session-error.js";
import type { Session } from "../session/session.js";
import type { SessionMessage } from "../types.js";

/** The compaction function `onCompaction` takes (the same as `Session.onCompaction`). */
export type ManagerCompactFunction = Parameters<Session["onCompaction"]>[0];
/** Options of `compactAfter` (the same as `Session.compactAfter`, e.g. `tokenCounter`). */
export type ManagerCompactAfterOptions = NonNullable<Parameters<Session["compactAfter"]>[1]>;
/** The handler `onCompactionError` takes (the same as `Session.onCompactionError`). */
export type ManagerCompactionErrorHandler = Parameters<Session["onCompactionError"]>[0];

/** Description of the block added by `withSearchableHistory`, as in the reference. */
export const HISTORY_DESCRIPTION = "Cross-session conversation history";

/**
 * What the manager's builder collected, applied to every session it hands out. Validated when given, with the
 * schemas `SessionConfig` uses (`schema/options.ts`), so a bad template fails at the builder call rather than at
 * some later `getSession`, with the message a Session's own builder gives.
 */
export class ManagerTemplates {
  private readonly blocks: ContextConfig[] = [];
  private cachedPrompt: WritableContextProvider | true | undefined;
  private compactFn: ManagerCompactFunction | undefined;
  private threshold: { value: number; options: ManagerCompactAfterOptions | undefined } | undefined;
  private onError: ManagerCompactionErrorHandler | undefined;
  private historyLabel: string | undefined;
  private outputLimits: ToolOutputLimits | undefined;

  private readonly newLabel = newBlockLabel(
    (label) => this.blocks.some((b) => b.label === label) || this.historyLabel === label,
  );

  addBlock(label: string, options: SessionContextOptions): void {
    parseInput(this.newLabel, label);
    parseInput(contextOptions, options);
    this.blocks.push({ label, ...options });
  }

  setCachedPrompt(provider: WritableContextProvider | undefined): void {
    parseInput(promptStore, provider);
    this.cachedPrompt = provider ?? true;
  }

  setCompaction(fn: ManagerCompactFunction): void {
    parseInput(compactFunction, fn);
    this.compactFn = fn;
  }

  setThreshold(value: number, options: ManagerCompactAfterOptions | undefined): void {
    parseInput(compactionThreshold, value);
    this.threshold = { value, options };
  }

  setErrorHandler(handler: ManagerCompactionErrorHandler): void {
    parseInput(compactionErrorHandler, handler);
    this.onError = handler;
  }

  setHistoryLabel(label: string): void {
    if (this.historyLabel !== undefined) {
      throw new SessionError("INVALID_ARGUMENT", "withSearchableHistory() was already called");
    }
    parseInput(this.newLabel, label);
    this.historyLabel = label;
  }

  setToolOutput(limits: Partial<ToolOutputLimits>): void {
    this.outputLimits = toolOutputLimits(limits);
  }

  /** The tool-output limits of every session's tools and of `session_search`. */
  get toolOutput(): ToolOutputLimits {
    return this.outputLimits ?? DEFAULT_TOOL_OUTPUT_LIMITS;
  }

  /** Applies every template to a fresh session; `history` backs the searchable-history block when configured. */
  apply<S extends Session<SessionMessage>>(session: S, history: SearchProvider): S {
    for (const { label, ...options } of this.blocks) session.withContext(label, options);
    if (this.cachedPrompt === true) session.withCachedPrompt();
    else if (this.cachedPrompt) session.withCachedPrompt(this.cachedPrompt);
    if (this.historyLabel !== undefined) {
      session.withContext(this.historyLabel, { description: HISTORY_DESCRIPTION, provider: history });
    }
    if (this.compactFn) session.onCompaction(this.compactFn);
    if (this.threshold) session.compactAfter(this.threshold.value, this.threshold.options);
    if (this.onError) session.onCompactionError(this.onError);
    if (this.outputLimits) session.withToolOutputLimits(this.outputLimits);
    return session;
  }

  /** Labels of template blocks without a provider: each session stores them under `<label>_<sessionId>`. */
  autoWiredLabels(): string[] {
    return this.blocks.filter((b) => b.provider === undefined).map((b) => b.label);
  }

  /** The searchable-history label, which has no stored rows. */
  get historyBlockLabel(): string | undefined {
    return this.historyLabel;
  }
}
