import {
  compactFunction,
  compactionErrorHandler,
  compactionThreshold,
  contextOptions,
  newBlockLabel,
  promptStore,
} from "../context/options-schema.js";
import { DEFAULT_TOOL_OUTPUT_LIMITS, type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import type {
  ContextConfig,
  SearchProvider,
  SessionContextOptions,
  WritableContextProvider,
} from "../context/types.js";
import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { parseInput } from "../schema/parse.js";
import { assertCompactionFits } from "../session/compaction-fit.js";
import { configOf, type SessionTemplate } from "../session/config.js";
import type { Session } from "../session/session.js";

/** The compaction function `onCompaction` takes (the same as `Session.onCompaction`). */
export type ManagerCompactFunction = Parameters<Session["onCompaction"]>[0];
/** Options of `compactAfter` (the same as `Session.compactAfter`, e.g. `tokenCounter`). */
export type ManagerCompactAfterOptions = NonNullable<Parameters<Session["compactAfter"]>[1]>;
/** The handler `onCompactionError` takes (the same as `Session.onCompactionError`). */
export type ManagerCompactionErrorHandler = Parameters<Session["onCompactionError"]>[0];

/** Description of the block added by `withSearchableHistory`, as in the reference. */
export const HISTORY_DESCRIPTION = "Cross-session conversation history";

/**
 * What the manager's builder collected, applied to every session it hands out. Validated once, when given, with
 * the schemas `SessionConfig` uses (`context/options-schema.ts`), so a bad template fails at the builder call rather than
 * at some later `getSession`, with the message a Session's own builder gives; a session then takes the templates
 * as they are (`SessionConfig.adopt`), not through its builder methods, which would check them again.
 */
export class ManagerTemplates {
  private readonly blocks: ContextConfig[] = [];
  /** `null`: each session's own storage (`withCachedPrompt()` without a provider). */
  private cachedPrompt: WritableContextProvider | null | undefined;
  /** The behaviour templates (compaction, tool-output limits), which may change while sessions are in use. */
  private behaviours: SessionTemplate = {};
  private historyLabel: string | undefined;

  private readonly newLabel = newBlockLabel(
    (label) => this.blocks.some((b) => b.label === label) || this.historyLabel === label,
  );

  addBlock(label: string, options: SessionContextOptions): void {
    parseInput(this.newLabel, label, { path: "label" });
    parseInput(contextOptions, options, { path: "options" });
    this.blocks.push({ label, ...options });
  }

  setCachedPrompt(provider: WritableContextProvider | undefined): void {
    parseInput(promptStore, provider, { path: "provider" });
    this.cachedPrompt = provider ?? null;
  }

  // Each behaviour setter returns the template it set, for the manager to hand to the sessions already in use.

  setCompaction(fn: ManagerCompactFunction): SessionTemplate {
    parseInput(compactFunction, fn, { path: "onCompaction" });
    assertCompactionFits(this.behaviours.threshold?.value, fn);
    return this.behave({ compactFn: fn });
  }

  setThreshold(value: number, options: ManagerCompactAfterOptions): SessionTemplate {
    parseInput(compactionThreshold, value, { path: "compactAfter" });
    assertCompactionFits(value, this.behaviours.compactFn);
    return this.behave({ threshold: { value, tokenCounter: options.tokenCounter } });
  }

  setErrorHandler(handler: ManagerCompactionErrorHandler): SessionTemplate {
    parseInput(compactionErrorHandler, handler, { path: "onCompactionError" });
    return this.behave({ onCompactionError: handler });
  }

  setToolOutput(limits: Partial<ToolOutputLimits>): SessionTemplate {
    return this.behave({ toolOutput: toolOutputLimits(limits) });
  }

  private behave(template: SessionTemplate): SessionTemplate {
    this.behaviours = { ...this.behaviours, ...template };
    return template;
  }

  setHistoryLabel(label: string): void {
    if (this.historyLabel !== undefined) {
      throw new SessionError("INVALID_ARGUMENT", "withSearchableHistory() was already called", {
        issues: [{ path: "withSearchableHistory", rule: "conflict" }],
      });
    }
    parseInput(this.newLabel, label, { path: "label" });
    this.historyLabel = label;
  }

  /** The tool-output limits of every session's tools and of `session_search`. */
  get toolOutput(): ToolOutputLimits {
    return this.behaviours.toolOutput ?? DEFAULT_TOOL_OUTPUT_LIMITS;
  }

  /** Applies every template to a fresh session; `history` backs the searchable-history block when configured. */
  apply<S extends Session<SessionMessage>>(session: S, history: SearchProvider): S {
    const blocks =
      this.historyLabel === undefined
        ? this.blocks
        : [...this.blocks, { label: this.historyLabel, description: HISTORY_DESCRIPTION, provider: history }];
    configOf(session).adopt({
      blocks,
      ...(this.cachedPrompt !== undefined ? { promptStore: this.cachedPrompt } : {}),
      ...this.behaviours,
    });
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
