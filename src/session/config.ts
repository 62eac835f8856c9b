import {
  compactFunction,
  compactionErrorHandler,
  compactionThreshold,
  contextOptions,
  messagesChangedListener,
  newBlockLabel,
  promptStore,
} from "../context/options-schema.js";
import { DEFAULT_TOOL_OUTPUT_LIMITS, type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import type { ContextConfig, SessionContextOptions, WritableContextProvider } from "../context/types.js";
import type { WritePolicy } from "../contract/store.js";
import { assertSessionId } from "../message/ids.js";
import { maxMessageBytes } from "../schema/limits.js";
import { parseInput } from "../schema/parse.js";
import { OPEN_POLICY, writePolicy } from "../store/write-policy.js";
import type { CompactFunction } from "../utils/compaction-helpers.js";
import { assertCompactionFits } from "./compaction-fit.js";
import type {
  CompactAfterOptions,
  CompactionErrorHandler,
  CompactionSetup,
  SessionTokenCounter,
} from "./compaction-types.js";
import type { ContextSetup } from "./context.js";
import type { MessagesChangedListener } from "./hooks.js";
import type { SessionOptions } from "./options.js";

/**
 * Settings validated once for many sessions (`SessionManager`'s templates, checked when set), which
 * {@link SessionConfig.adopt} takes as they are; an absent field leaves the session's own setting.
 */
export interface SessionTemplate {
  /** Blocks to open with (a fresh session's: their labels are unique among themselves). */
  blocks?: readonly ContextConfig[];
  /** Where the frozen prompt is persisted; `null`: the session's own storage (`withCachedPrompt()`). */
  promptStore?: WritableContextProvider | null;
  compactFn?: CompactFunction;
  threshold?: { value: number; tokenCounter: SessionTokenCounter | undefined };
  onCompactionError?: CompactionErrorHandler;
  toolOutput?: ToolOutputLimits;
}

// Each Session's config, by Session (which this file cannot import: session.ts imports it), so SessionManager
// applies its templates through `adopt` instead of the builder methods, which would check them again per session.
const configs = new WeakMap<object, SessionConfig>();

/** The config of a Session, for `SessionManager`, which applies its templates to it with `adopt`. */
export function configOf(session: object): SessionConfig {
  return configs.get(session)!;
}

/**
 * What a Session's builder methods and constructor options set, validated here with the schemas of
 * `context/options-schema.ts` (`INVALID_ARGUMENT`), which `ManagerTemplates` shares (its templates, validated once, come
 * in through {@link SessionConfig.adopt}): which
 * session id its rows are namespaced by, the context blocks and prompt store its context opens with, the
 * compaction setup, the write policy, the tool-output limits and the framework hook. `context` is read once, when
 * the session is first used; the rest may change at any time (the compactor reads `compaction` on every use).
 */
export class SessionConfig {
  sessionId: string;
  readonly context: ContextSetup = { blocks: [], promptStore: undefined };
  readonly compaction: CompactionSetup = {};
  policy: WritePolicy = OPEN_POLICY;
  toolOutput: ToolOutputLimits = DEFAULT_TOOL_OUTPUT_LIMITS;
  /** The reference's `internal_onMessagesChanged` listener. */
  messagesChanged: MessagesChangedListener | undefined;

  /** Reads `new Session(source, options)`'s options for `session`, in the order the builder methods would apply them. */
  constructor(session: object, options: SessionOptions) {
    configs.set(session, this);
    this.sessionId = options.sessionId ?? "";
    assertSessionId(this.sessionId);
    for (const { label, ...rest } of options.context ?? []) this.addBlock(label, rest);
    if (options.promptStore) this.setPromptStore(options.promptStore);
    if (options.tokenCounter) this.compaction.tokenCounter = options.tokenCounter;
    if (options.onCompactionError) this.compaction.onError = options.onCompactionError;
    this.policy = writePolicy({
      ...(options.reservedMetadataKeys ? { reservedMetadataKeys: options.reservedMetadataKeys } : {}),
    });
    const cap = options.maxMessageBytes ?? options.maxRowBytes;
    if (cap !== undefined) this.setMessageLimit(cap);
  }

  setSessionId(sessionId: string): void {
    assertSessionId(sessionId);
    this.sessionId = sessionId;
  }

  /** A block to open with; labels are unique. */
  addBlock(label: string, options: SessionContextOptions): void {
    parseInput(
      newBlockLabel((taken) => this.context.blocks.some((b) => b.label === taken)),
      label,
      { path: "label" },
    );
    parseInput(contextOptions, options, { path: "options" });
    this.context.blocks.push({ label, ...options });
  }

  /** Drops a block not yet opened; true when it was there. */
  removeBlock(label: string): boolean {
    const index = this.context.blocks.findIndex((b) => b.label === label);
    if (index < 0) return false;
    this.context.blocks.splice(index, 1);
    return true;
  }

  /** Where the frozen prompt is persisted: `provider`, or (none given) the session's own storage. */
  setPromptStore(provider: WritableContextProvider | undefined): void {
    parseInput(promptStore, provider, { path: "provider" });
    this.context.promptStore = provider ?? null;
  }

  setMessageLimit(maxBytes: number): void {
    parseInput(maxMessageBytes, maxBytes, { path: "maxMessageBytes" });
    this.policy = { ...this.policy, maxMessageBytes: maxBytes };
  }

  setCompactFunction(fn: CompactFunction): void {
    parseInput(compactFunction, fn, { path: "onCompaction" });
    assertCompactionFits(this.compaction.threshold, fn);
    this.compaction.fn = fn;
  }

  setCompactionThreshold(threshold: number, options: CompactAfterOptions): void {
    parseInput(compactionThreshold, threshold, { path: "compactAfter" });
    assertCompactionFits(threshold, this.compaction.fn);
    this.compaction.threshold = threshold;
    if (options.tokenCounter) this.compaction.tokenCounter = options.tokenCounter;
  }

  setCompactionErrorHandler(handler: CompactionErrorHandler): void {
    parseInput(compactionErrorHandler, handler, { path: "onCompactionError" });
    this.compaction.onError = handler;
  }

  setToolOutputLimits(limits: Partial<ToolOutputLimits>): void {
    this.toolOutput = toolOutputLimits(limits);
  }

  /**
   * Takes settings validated once for many sessions without checking them again (the builder methods check each
   * value they are given; a manager's templates were checked when set).
   */
  adopt(template: SessionTemplate): void {
    const { blocks = [], promptStore, compactFn, threshold, onCompactionError, toolOutput } = template;
    // Each session gets its own copy of a block's settings, as `withContext` makes one.
    for (const block of blocks) this.context.blocks.push({ ...block });
    if (promptStore !== undefined) this.context.promptStore = promptStore;
    if (compactFn) this.compaction.fn = compactFn;
    if (threshold) {
      this.compaction.threshold = threshold.value;
      if (threshold.tokenCounter) this.compaction.tokenCounter = threshold.tokenCounter;
    }
    if (onCompactionError) this.compaction.onError = onCompactionError;
    if (toolOutput) this.toolOutput = toolOutput;
  }

  setMessagesChanged(listener: MessagesChangedListener | null): void {
    parseInput(messagesChangedListener, listener, { path: "internal_onMessagesChanged" });
    this.messagesChanged = listener ?? undefined;
  }
}
