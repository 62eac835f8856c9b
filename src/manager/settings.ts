/**
 * The settings half of a {@link SessionManager}: what it hands every session it builds. Context blocks, the cached
 * prompt and searchable history decide what sessions store, so they are fixed before the first getSession();
 * compaction and tool-output limits may change at any time. Kept apart so the manager's operations stay a list
 * of short methods.
 */

import type { ToolOutputLimits } from "../context/output.js";
import type { SessionContextOptions, WritableContextProvider } from "../context/types.js";
import type { SessionMessage } from "../contract/message.js";
import { optionsArg } from "../options-arg.js";
import { configOf, type SessionTemplate } from "../session/config.js";
import { builderOf, type ManagerState } from "./state.js";
import type {
  ManagerCompactAfterOptions,
  ManagerCompactFunction,
  ManagerCompactionErrorHandler,
  ManagerTemplates,
} from "./templates.js";

/** The builder methods of every {@link SessionManager} (its base class; not made on its own). */
export abstract class ManagerSettings<M extends SessionMessage = SessionMessage> {
  protected constructor(protected readonly state: ManagerState<M>) {}

  // Changes a behaviour template, validated once by `set`, and hands it to every session handed out.
  private behaviour(set: (templates: ManagerTemplates) => SessionTemplate): this {
    const template = set(this.state.templates);
    for (const session of this.state.sessions.values()) configOf(session).adopt(template);
    return this;
  }

  /** Adds a context block to every session; without a provider it is stored per session (`<label>_<sessionId>`). */
  withContext(label: string, options?: SessionContextOptions | null): this {
    builderOf(this.state, "withContext").addBlock(label, optionsArg(options, "withContext"));
    return this;
  }

  /** Persists every session's frozen prompt (under `_system_prompt_<sessionId>` when no provider is given). */
  withCachedPrompt(provider?: WritableContextProvider): this {
    builderOf(this.state, "withCachedPrompt").setCachedPrompt(provider);
    return this;
  }

  /** Registers the compaction function of every session (at any time, also for sessions already in use). */
  onCompaction(fn: ManagerCompactFunction): this {
    return this.behaviour((t) => t.setCompaction(fn));
  }

  /** Auto-compacts every session above `threshold` estimated tokens (`tokenCounter` as on Session); at any time. */
  compactAfter(threshold: number, given?: ManagerCompactAfterOptions | null): this {
    const options = optionsArg(given, "compactAfter");
    return this.behaviour((t) => t.setThreshold(threshold, options));
  }

  /** Receives failures of automatic compaction in any managed session; at any time. */
  onCompactionError(handler: ManagerCompactionErrorHandler): this {
    return this.behaviour((t) => t.setErrorHandler(handler));
  }

  /**
   * Bounds what the memory tools of every session and `session_search` return (`maxHitChars` per hit,
   * `maxOutputChars` per result; defaults 8,000 and 32,000), with a marker saying how to see the rest; at any
   * time (it changes what tools return, not what is stored).
   */
  withToolOutputLimits(limits: Partial<ToolOutputLimits>): this {
    return this.behaviour((t) => t.setToolOutput(limits));
  }

  /** Adds a read-only block `label` to every session through which the model searches all sessions. */
  withSearchableHistory(label: string): this {
    builderOf(this.state, "withSearchableHistory").setHistoryLabel(label);
    return this;
  }
}
