import { blockKey, foreignBlockKey, foreignKeyError, foreignKeyProvider } from "../context/block-keys.js";
import { ContextBlocks } from "../context/blocks.js";
import type { ToolOutputLimits } from "../context/output.js";
import { BlockContextProvider } from "../context/providers.js";
import { SkillTracker } from "../context/skills.js";
import { contextTools, type SessionToolSet } from "../context/tools.js";
import {
  type ContextConfig,
  isSessionBound,
  type SessionContextOptions,
  type WritableContextProvider,
} from "../context/types.js";
import { type ContextRecord, hasContextStorage } from "../contract/context.js";
import type { SessionProvider } from "../contract/provider.js";
import type { SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { emitWarning } from "../runtime/warn.js";

/** The record of a named session's rows (the unnamed session "" records none: it is no one's). */
function sessionRecord(sessionId: string): ContextRecord | undefined {
  return sessionId === "" ? undefined : { sessionId };
}

/** How a session's context is configured before it is used. */
export interface ContextSetup {
  blocks: ContextConfig[];
  /** `undefined` = no cached prompt; `null` = auto-wired; a provider = that provider. */
  promptStore: WritableContextProvider | null | undefined;
}

/**
 * The context half of a Session: blocks, the frozen system prompt and its store, skill tracking and the memory
 * tools. Block writes never change the frozen prompt; only `refresh()` does.
 */
export class SessionContext {
  readonly blocks = new ContextBlocks();
  readonly skills = new SkillTracker();
  /** The labels stored in the store's block table (blockKey), whose keys must not name another session's block. */
  private readonly autoWired = new Set<string>();
  private snapshot: string | undefined;
  private freezing: Promise<string> | undefined;

  private constructor(
    private readonly provider: SessionProvider,
    private readonly store: SessionStore | undefined,
    private readonly sessionId: string,
    private readonly promptStore: WritableContextProvider | undefined,
    /** Throws `CLOSED` once the Session closed: its tools check it on every call. */
    readonly assertOpen: () => void,
  ) {}

  /** Builds and loads the context of a session: auto-wires blocks, reads every provider, restores skills. */
  static async open(
    setup: ContextSetup,
    provider: SessionProvider,
    store: SessionStore | undefined,
    sessionId: string,
    assertOpen: () => void,
  ): Promise<SessionContext> {
    let promptStore = setup.promptStore ?? undefined;
    if (setup.promptStore === null && store && hasContextStorage(store)) {
      promptStore = new BlockContextProvider(
        store.blocks,
        blockKey("_system_prompt", sessionId),
        sessionRecord(sessionId),
      );
    }
    const context = new SessionContext(provider, store, sessionId, promptStore, assertOpen);
    const wired =
      store && hasContextStorage(store) ? setup.blocks.filter((b) => b.provider === undefined) : [];
    const labels = wired.map(({ label }) => label);
    for (const { label, ...options } of setup.blocks) context.register(label, options, labels);
    await context.blocks.loadAll();
    await context.restoreSkills();
    return context;
  }

  /**
   * Registers a block, auto-wired to the store's block table unless it has a provider. `configured`: every block
   * the session is opened with that is auto-wired (a block added at runtime is checked against those registered).
   */
  private register(label: string, given: SessionContextOptions, configured?: readonly string[]): void {
    const options = this.bind(label, given);
    const table =
      options.provider === undefined && this.store && hasContextStorage(this.store)
        ? this.store.blocks
        : undefined;
    if (table && typeof label === "string" && label.startsWith("_")) {
      // The library's own rows share the block table under `_…` keys: a block "_system_prompt" would read and
      // overwrite the session's cached prompt.
      throw new SessionError(
        "INVALID_ARGUMENT",
        `Block label "${label}" starts with "_", which is reserved for the library's own rows in the block table ` +
          `(such as the cached prompt, "_system_prompt_<session>"); rename the block or give it a provider`,
        { issues: [{ path: "label", rule: "format" }] },
      );
    }
    let autoWired: WritableContextProvider | undefined;
    if (table) {
      // Added at runtime, a block whose key is another session's is refused. Configured, the session still opens (it
      // may be stored from before such ids were refused): that block alone reads nothing and refuses writes.
      if (configured === undefined) this.assertAddable(label);
      const foreign = configured && foreignBlockKey(configured, label, this.sessionId);
      if (foreign) emitWarning(foreign, "AgentSessionContextWarning");
      autoWired = foreign
        ? foreignKeyProvider(foreign)
        : new BlockContextProvider(table, blockKey(label, this.sessionId), sessionRecord(this.sessionId));
    }
    this.blocks.register(label, autoWired ? { ...options, provider: autoWired } : options);
    if (autoWired) this.autoWired.add(label);
    else this.autoWired.delete(label);
  }

  /** The options with a session-bound provider replaced by the one it makes for this Session's block. */
  private bind(label: string, options: SessionContextOptions): SessionContextOptions {
    const { provider } = options;
    if (!isSessionBound(provider)) return options;
    const binding = { store: this.store, sessionId: this.sessionId, label, maxTokens: options.maxTokens };
    return { ...options, provider: provider.forSession(binding) };
  }

  // A block added at runtime whose key is another session's, or that makes a registered block's key another
  // session's, is refused; a configured block already standing in for a foreign key (see register) is no reason.
  private assertAddable(label: string): void {
    const labels = [...new Set([...this.autoWired, label])];
    const reason =
      foreignBlockKey(labels, label, this.sessionId) ??
      labels
        .map((other) => foreignBlockKey([other, label], other, this.sessionId))
        .find((r) => r !== undefined);
    if (reason !== undefined) throw foreignKeyError(reason);
  }

  /** Rebuilds the loaded skills of `label` (every block when omitted) from the history, when a skill block exists. */
  private async restoreSkills(label?: string): Promise<void> {
    if (this.blocks.labels((c) => c.isSkill).length > 0) await this.skills.restore(this.provider, label);
  }

  /** Adds a block at runtime and loads it (the frozen prompt is untouched until `refresh()`). */
  async add(label: string, options: SessionContextOptions = {}): Promise<void> {
    if (options.provider === undefined && !(this.store && hasContextStorage(this.store))) {
      throw new SessionError(
        "UNSUPPORTED",
        `Block "${label}" needs a provider: this session's storage cannot hold context blocks`,
      );
    }
    this.register(label, options);
    await this.blocks.load(label);
    // Only this block's skills: a load of another block still running (its step not stored yet) stays tracked.
    if (this.blocks.get(label)?.isSkill) await this.restoreSkills(label);
  }

  /** Removes a block and forgets its loaded skills. */
  remove(label: string): boolean {
    this.skills.dropLabel(label);
    this.autoWired.delete(label);
    return this.blocks.remove(label);
  }

  /** The frozen prompt: from memory, else from the prompt store, else rendered now and persisted. */
  freeze(): Promise<string> {
    if (this.snapshot !== undefined) return Promise.resolve(this.snapshot);
    this.freezing ??= (async () => {
      const stored = this.promptStore ? await this.promptStore.get() : null;
      if (typeof stored === "string") {
        this.snapshot = stored;
        return stored;
      }
      const rendered = this.blocks.render();
      await this.promptStore?.set(rendered);
      this.snapshot = rendered;
      return rendered;
    })().finally(() => {
      this.freezing = undefined;
    });
    return this.freezing;
  }

  /** Reloads every block, re-renders, persists and returns the new frozen prompt. */
  async refresh(): Promise<string> {
    await this.blocks.loadAll();
    const rendered = this.blocks.render();
    await this.promptStore?.set(rendered);
    this.snapshot = rendered;
    return rendered;
  }

  /**
   * The current values of changed `whenChanged: "remind"` blocks, for the next model call (never stored); null when
   * none changed or nothing is frozen yet. The comparison is against the prompt `freeze()` returns — this
   * Session's snapshot, else the stored prompt — so a reminder survives a restart and lasts until `refresh()`.
   */
  async reminder(): Promise<string | null> {
    const prompt = this.snapshot ?? (this.promptStore ? await this.promptStore.get() : null);
    return typeof prompt === "string" ? this.blocks.reminder(prompt) : null;
  }

  /** The prompt a token estimate should count, without persisting anything. */
  async promptForEstimate(): Promise<string> {
    if (this.snapshot !== undefined) return this.snapshot;
    const stored = this.promptStore ? await this.promptStore.get() : null;
    return typeof stored === "string" ? stored : this.blocks.render();
  }

  /** Unloads a skill and marks its last load in the history; false when it was not loaded. */
  unloadSkill(label: string, key: string): Promise<boolean> {
    return this.skills.serialise(label, key, async () => {
      if (!this.skills.has(label, key)) return false;
      // Marked first: a write that fails leaves the skill loaded, as its document still is, for a retry.
      await this.skills.markUnloaded(this.provider, label, key);
      this.skills.delete(label, key);
      return true;
    });
  }

  /** The memory tools for the blocks present now, their results within `limits`. */
  tools(limits: ToolOutputLimits): SessionToolSet {
    return contextTools(this, limits);
  }
}
