import { DEFAULT_TOOL_OUTPUT_LIMITS, type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import type { SessionContextOptions, WritableContextProvider } from "../context/types.js";
import { assertSessionId } from "../message.js";
import { maxMessageBytes } from "../schema/limits.js";
import {
  compactFunction,
  compactionErrorHandler,
  compactionThreshold,
  contextOptions,
  messagesChangedListener,
  newBlockLabel,
  promptStore,
} from "../schema/options.js";
import { parseInput } from "../schema/to-session-error.js";
import { OPEN_POLICY, type WritePolicy, writePolicy } from "../store/write-policy.js";
import type { CompactFunction } from "../utils/compaction-helpers.js";
import type { CompactAfterOptions, CompactionErrorHandler, CompactionSetup } from "./compaction.js";
import type { ContextSetup } from "./context.js";
import type { MessagesChangedListener } from "./hooks.js";
import type { SessionOptions } from "./options.js";

/**
 * What a Session's builder methods and constructor options set, validated here with the schemas of
 * `schema/options.ts` (`INVALID_ARGUMENT`), which `ManagerTemplates` shares: which
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

  /** Reads `new Session(source, options)`'s options, in the order the builder methods would apply them. */
  constructor(options: SessionOptions) {
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
    );
    parseInput(contextOptions, options);
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
    parseInput(promptStore, provider);
    this.context.promptStore = provider ?? null;
  }

  setMessageLimit(maxBytes: number): void {
    parseInput(maxMessageBytes, maxBytes);
    this.policy = { ...this.policy, maxMessageBytes: maxBytes };
  }

  setCompactFunction(fn: CompactFunction): void {
    parseInput(compactFunction, fn);
    this.compaction.fn = fn;
  }

  setCompactionThreshold(threshold: number, options: CompactAfterOptions): void {
    parseInput(compactionThreshold, threshold);
    this.compaction.threshold = threshold;
    if (options.tokenCounter) this.compaction.tokenCounter = options.tokenCounter;
  }

  setCompactionErrorHandler(handler: CompactionErrorHandler): void {
    parseInput(compactionErrorHandler, handler);
    this.compaction.onError = handler;
  }

  setToolOutputLimits(limits: Partial<ToolOutputLimits>): void {
    this.toolOutput = toolOutputLimits(limits);
  }

  setMessagesChanged(listener: MessagesChangedListener | null): void {
    parseInput(messagesChangedListener, listener);
    this.messagesChanged = listener ?? undefined;
  }
}
