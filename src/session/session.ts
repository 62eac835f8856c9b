import { DEFAULT_TOOL_OUTPUT_LIMITS, type ToolOutputLimits, toolOutputLimits } from "../context/output.js";
import {
  type AnthropicToolDefinition,
  dispatchToolCall,
  type OpenAIResponsesToolDefinition,
  type OpenAIToolCall,
  type OpenAIToolDefinition,
  readToolCall,
  type ToolFormat,
  toAnthropicTools,
  toOpenAIResponsesTools,
  toOpenAITools,
} from "../context/tool-formats.js";
import type { SessionToolSet } from "../context/tools.js";
import type { ContextBlock, SessionContextOptions } from "../context/types.js";
import { errorMessage, SessionError } from "../errors.js";
import { describe } from "../message.js";
import type { SqliteOptions } from "../sqlite/open.js";
import { acquirePathStore } from "../sqlite/shared-path.js";
import type { SessionStore } from "../store/types.js";
import type { SessionMessage, SessionProvider } from "../types.js";
import type { CompactFunction } from "../utils/compaction-helpers.js";
import { SessionBase } from "./base.js";
import { broadcasterOf, StatusFrames } from "./broadcast.js";
import type {
  CompactAfterOptions,
  CompactionErrorHandler,
  CompactionPlan,
  CompactionReport,
} from "./compaction.js";
import { notifyChanged } from "./hooks.js";
import { resolveSource, type SessionSource } from "./source.js";

/**
 * A conversation: tree-structured messages with branches, overlays and search, context blocks rendered into a
 * frozen system prompt, the model's memory tools, and compaction. Build one with `Session.create(source)` and
 * chain builder methods in any order; everything resolves on the first awaited call. `M` is the app's message
 * type (e.g. its AI SDK `UIMessage<Metadata, DataParts, Tools>`): writes take it and reads return it, a typed view
 * the app opts into with `Session.create<M>(...)` (the store keeps any valid message and checks no app schema).
 */
export class Session<M extends SessionMessage = SessionMessage> extends SessionBase<M> {
  private toolOutput: ToolOutputLimits = DEFAULT_TOOL_OUTPUT_LIMITS;

  /**
   * Creates a session on a SQLite path, a database handle, an object with a `sql` tag (a Durable Object / Agent),
   * a SessionStore or a SessionProvider. Sessions on the same path share one connection (closed with the last).
   * `M` is the app's message type: given (`Session.create<MyUIMessage>(store)`) or taken from a typed source.
   */
  static create<M extends SessionMessage = SessionMessage>(
    source: SessionStore<M> | SessionProvider<M> | SessionSource,
    options: SqliteOptions = {},
  ): Session<M> {
    if (typeof source === "string") {
      // Every Session on the same file shares one connection: servers create one per request.
      const shared = acquirePathStore(source, options);
      const session = new Session<M>(shared.store);
      session.releaseStore = shared.release;
      return session;
    }
    const resolved = resolveSource(source, options);
    const session = new Session<M>(resolved.kind === "store" ? resolved.store : resolved.provider);
    // An Agent (a `sql` tag and `broadcast`) gets the reference's cf_agent_session status frames.
    const broadcaster = broadcasterOf(source);
    if (broadcaster) session.compactionSetup.frames = new StatusFrames(broadcaster);
    if (resolved.kind === "store" && resolved.owned) session.releaseStore = () => resolved.store.close();
    return session;
  }

  /**
   * Registers the function that summarises a range of history (e.g. `createCompactFunction(...)`); may be called
   * at any time, also on a session in use (like `compactAfter` and `onCompactionError`).
   */
  onCompaction(fn: CompactFunction): this {
    if (typeof fn !== "function") throw new SessionError("INVALID_ARGUMENT", "onCompaction needs a function");
    this.compactionSetup.fn = fn;
    return this;
  }

  /** Compacts automatically after an append when the estimated tokens are strictly above `threshold`. */
  compactAfter(threshold: number, options: CompactAfterOptions = {}): this {
    if (typeof threshold !== "number" || !Number.isFinite(threshold) || threshold < 0) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `compactAfter needs a token threshold >= 0, got ${describe(threshold)}`,
      );
    }
    this.compactionSetup.threshold = threshold;
    if (options.tokenCounter) this.compactionSetup.tokenCounter = options.tokenCounter;
    return this;
  }

  /** Receives failures of automatic compaction (the append has already succeeded). */
  onCompactionError(handler: CompactionErrorHandler): this {
    if (typeof handler !== "function") {
      throw new SessionError("INVALID_ARGUMENT", "onCompactionError needs a function");
    }
    this.compactionSetup.onError = handler;
    return this;
  }

  /**
   * Bounds what the memory tools return to the model: `maxHitChars` per search hit, `maxOutputChars` per result
   * (defaults 8,000 and 32,000); more is cut with a marker that tells the model how to see the rest. May be set
   * at any time.
   */
  withToolOutputLimits(limits: Partial<ToolOutputLimits>): this {
    this.toolOutput = toolOutputLimits(limits);
    return this;
  }

  /**
   * Caps a message at `maxBytes` UTF-8 bytes of JSON (`metadata` included): a larger append, upsert, update or
   * import is refused with `TOO_LARGE`. Nothing is ever truncated on write (use `truncateOlderMessages` and the
   * row-size helpers of `agent-session/utils` to shrink what you send to a model).
   */
  withMaxMessageBytes(maxBytes: number): this {
    this.setMessageLimit(maxBytes);
    return this;
  }

  /** @deprecated the old name of {@link withMaxMessageBytes}: it now refuses a larger message instead of truncating it. */
  withRowSizeLimit(maxBytes: number): this {
    this.setMessageLimit(maxBytes);
    return this;
  }

  /**
   * Summarises older history of the path to `leafId` into an overlay and reports what it did (range, tokens
   * before and after, summary size); null when there is nothing to compact. A blank or non-shrinking summary is
   * refused (`COMPACTION_REFUSED`) and nothing is stored; a throwing summariser rejects.
   */
  async compact(leafId?: string | null): Promise<CompactionReport | null>;
  async compact(leafId: string | null | undefined, options: { dryRun: true }): Promise<CompactionPlan | null>;
  async compact(
    leafId?: string | null,
    options?: { dryRun?: boolean },
  ): Promise<CompactionReport | CompactionPlan | null> {
    const { compactor } = await this.state();
    if (options?.dryRun) return compactor.plan(leafId);
    const report = await compactor.compact(leafId);
    if (report) notifyChanged(this.messagesChanged, { type: "compact" });
    return report;
  }

  /** What `compact()` would do, computed without calling the model (a dry run). */
  async planCompaction(leafId?: string | null): Promise<CompactionPlan | null> {
    return (await this.state()).compactor.plan(leafId);
  }

  /** Estimated tokens of the next model call (history with overlays plus the frozen prompt). */
  async estimateTokens(leafId?: string | null): Promise<number> {
    return (await this.state()).compactor.estimate(leafId);
  }

  /** A block as last loaded, or null (blocks load on the first awaited call, e.g. `await session.ready()`). */
  getContextBlock(label: string): ContextBlock | null {
    return this.resolved?.context.blocks.get(label) ?? null;
  }

  /** Every block as last loaded, in prompt order (empty until the session is ready). */
  getContextBlocks(): ContextBlock[] {
    return this.resolved?.context.blocks.list() ?? [];
  }

  /** Replaces a writable block's content (`READONLY`, `TOKEN_LIMIT` errors); the frozen prompt is untouched. */
  async replaceContextBlock(label: string, content: string): Promise<ContextBlock> {
    return (await this.state()).context.blocks.replace(label, content);
  }

  /** Appends to a writable block, on a new line. */
  async appendContextBlock(label: string, content: string): Promise<ContextBlock> {
    return (await this.state()).context.blocks.append(label, content);
  }

  /** Writes a document of a writable skill block. */
  async setSkill(label: string, key: string, content: string, description?: string): Promise<ContextBlock> {
    return (await this.state()).context.blocks.setKeyed(label, key, content, description);
  }

  /** Indexes an entry of a writable search block. */
  async setSearchEntry(label: string, key: string, content: string): Promise<ContextBlock> {
    return (await this.state()).context.blocks.setKeyed(label, key, content);
  }

  /** Adds a block at runtime and loads it; call `refreshSystemPrompt()` to show it in the prompt. */
  async addContext(label: string, options: SessionContextOptions = {}): Promise<ContextBlock> {
    const { context } = await this.state();
    await context.add(label, options);
    return context.blocks.get(label)!;
  }

  /** Removes a block (and its loaded-skill tracking); true when it existed. */
  removeContext(label: string): boolean {
    if (this.resolved) return this.resolved.context.remove(label);
    if (this.initialising) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "removeContext() cannot run while the session is initialising",
      );
    }
    const before = this.contextSetup.blocks.length;
    this.contextSetup.blocks = this.contextSetup.blocks.filter((b) => b.label !== label);
    return this.contextSetup.blocks.length < before;
  }

  /** The system prompt, rendered once and then frozen (persisted with `withCachedPrompt`) for prompt caching. */
  async freezeSystemPrompt(): Promise<string> {
    return (await this.state()).context.freeze();
  }

  /** Reloads every block, re-renders and persists the prompt, and returns it. */
  async refreshSystemPrompt(): Promise<string> {
    return (await this.state()).context.refresh();
  }

  /**
   * The memory tools (an AI SDK ToolSet) for the blocks present now; `limits` overrides the session's tool-output
   * limits for these tools.
   */
  async tools(limits?: Partial<ToolOutputLimits>): Promise<SessionToolSet> {
    const bounds = toolOutputLimits(limits, this.toolOutput);
    return (await this.state()).context.tools(bounds);
  }

  /**
   * The same tools as JSON-Schema definitions: `"openai"` (Chat Completions), `"openai-responses"` (Responses
   * API), both with `strict: true` where the schema allows, or `"anthropic"`.
   */
  async toolDefinitions(format: "openai"): Promise<OpenAIToolDefinition[]>;
  async toolDefinitions(format: "openai-responses"): Promise<OpenAIResponsesToolDefinition[]>;
  async toolDefinitions(format: "anthropic"): Promise<AnthropicToolDefinition[]>;
  async toolDefinitions(
    format: ToolFormat,
  ): Promise<OpenAIToolDefinition[] | OpenAIResponsesToolDefinition[] | AnthropicToolDefinition[]> {
    const tools = await this.tools();
    if (format === "openai") return toOpenAITools(tools);
    if (format === "openai-responses") return toOpenAIResponsesTools(tools);
    if (format === "anthropic") return toAnthropicTools(tools);
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Unknown tool format ${JSON.stringify(format)}: use "openai", "openai-responses" or "anthropic"`,
    );
  }

  /**
   * Executes a memory-tool call from any SDK — a name and input (object or JSON string), or an OpenAI tool call
   * as received (Chat Completions or Responses API); never throws.
   */
  async executeTool(call: OpenAIToolCall): Promise<string>;
  async executeTool(name: string, input: unknown): Promise<string>;
  async executeTool(nameOrCall: string | OpenAIToolCall, input?: unknown): Promise<string> {
    try {
      if (typeof nameOrCall === "string")
        return await dispatchToolCall(await this.tools(), nameOrCall, input);
      const call = readToolCall(nameOrCall);
      if (!call) {
        return 'Error: invalid tool call: expected { function: { name, arguments } } or { type: "function_call", name, arguments }';
      }
      return await dispatchToolCall(await this.tools(), call.name as string, call.input);
    } catch (error) {
      return `Error: ${errorMessage(error)}`;
    }
  }

  /** Unloads a loaded skill; false when it was not loaded. */
  async unloadSkill(label: string, key: string): Promise<boolean> {
    return (await this.state()).context.unloadSkill(label, key);
  }

  /**
   * The loaded skills as `label:key`. Async, as in the reference: it waits for the session to be ready, so a
   * fresh Session over a history with `load_context` results answers from that history on its first call.
   */
  async getLoadedSkillKeys(): Promise<Set<string>> {
    return (await this.state()).context.skills.keys();
  }
}
