import { DEFAULT_TOOL_OUTPUT_LIMITS, type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import type { SessionContextOptions, WritableContextProvider } from "../context/types.js";
import { assertContextOptions, assertLabel, isWritableProvider } from "../context/types.js";
import { SessionError } from "../errors.js";
import { assertSessionId, describe } from "../message.js";
import { assertByteCap, OPEN_POLICY, type WritePolicy, writePolicy } from "../store/write-policy.js";
import type { CompactFunction } from "../utils/compaction-helpers.js";
import type { CompactAfterOptions, CompactionErrorHandler, CompactionSetup } from "./compaction.js";
import type { ContextSetup } from "./context.js";
import type { MessagesChangedListener } from "./hooks.js";
import type { SessionOptions } from "./options.js";

/**
 * What a Session's builder methods and constructor options set, validated here (`INVALID_ARGUMENT`): which
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
    assertLabel(label);
    assertContextOptions(options);
    if (this.context.blocks.some((b) => b.label === label)) {
      throw new SessionError("INVALID_ARGUMENT", `Block "${label}" already exists`);
    }
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
    if (provider !== undefined && !isWritableProvider(provider)) {
      throw new SessionError("INVALID_ARGUMENT", "withCachedPrompt needs a provider with get() and set()");
    }
    this.context.promptStore = provider ?? null;
  }

  setMessageLimit(maxBytes: number): void {
    assertByteCap(maxBytes, "maxMessageBytes");
    this.policy = { ...this.policy, maxMessageBytes: maxBytes };
  }

  setCompactFunction(fn: CompactFunction): void {
    if (typeof fn !== "function") throw new SessionError("INVALID_ARGUMENT", "onCompaction needs a function");
    this.compaction.fn = fn;
  }

  setCompactionThreshold(threshold: number, options: CompactAfterOptions): void {
    if (typeof threshold !== "number" || !Number.isFinite(threshold) || threshold < 0) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `compactAfter needs a token threshold >= 0, got ${describe(threshold)}`,
      );
    }
    this.compaction.threshold = threshold;
    if (options.tokenCounter) this.compaction.tokenCounter = options.tokenCounter;
  }

  setCompactionErrorHandler(handler: CompactionErrorHandler): void {
    if (typeof handler !== "function") {
      throw new SessionError("INVALID_ARGUMENT", "onCompactionError needs a function");
    }
    this.compaction.onError = handler;
  }

  setToolOutputLimits(limits: Partial<ToolOutputLimits>): void {
    this.toolOutput = toolOutputLimits(limits);
  }

  setMessagesChanged(listener: MessagesChangedListener | null): void {
    if (listener !== null && typeof listener !== "function") {
      throw new SessionError("INVALID_ARGUMENT", "internal_onMessagesChanged needs a function or null");
    }
    this.messagesChanged = listener ?? undefined;
  }
}
