import type { SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import type { ToolOutputLimits } from "./output.js";

/** A read-only block: its content is rendered into the system prompt. */
export interface ContextProvider {
  get(): Promise<string | null>;
  /** Called once with the block label before the first `get`. */
  init?(label: string): void | Promise<void>;
}

/** A block the model can rewrite through `set_context`. */
export interface WritableContextProvider extends ContextProvider {
  set(content: string): Promise<void>;
}

/** Keyed documents loaded on demand: `get()` lists them, `load(key)` returns one. */
export interface SkillProvider extends ContextProvider {
  load(key: string): Promise<string | null>;
  set?(key: string, content: string, description?: string): Promise<void>;
}

/**
 * Searchable keyed entries: `get()` summarises, `search(query)` returns matches as text. The `search_context`
 * tool passes its output limits; a provider that formats hits should cap each hit and the total with them (the
 * tool cuts any longer result as a whole).
 */
export interface SearchProvider extends ContextProvider {
  search(query: string, limits?: ToolOutputLimits): Promise<string | null>;
  set?(key: string, content: string): Promise<void>;
}

/** What a Session tells a {@link SessionBoundProvider} about the block it opens. */
export interface BlockBinding {
  /** The store the Session is on; undefined for a Session over a bare `SessionProvider`. */
  store: SessionStore | undefined;
  /** The Session's id ("" for the unnamed session). */
  sessionId: string;
  label: string;
  /** The block's `maxTokens`, when it declares one. */
  maxTokens: number | undefined;
}

/**
 * A provider made for each Session that opens its block (a manager's template serves many sessions, each with its
 * own store reads): the Session calls `forSession` when it registers the block and uses the provider it answers.
 * Its own `get` is what a caller outside a Session reads (a bound provider is the usual answer).
 */
export interface SessionBoundProvider extends ContextProvider {
  forSession(binding: BlockBinding): AnyContextProvider;
}

/** True when the provider is made per Session (see {@link SessionBoundProvider}). */
export function isSessionBound(provider: unknown): provider is SessionBoundProvider {
  return hasFunction(provider, "get") && hasFunction(provider, "forSession");
}

/** Any of the four provider kinds. */
export type AnyContextProvider = ContextProvider | WritableContextProvider | SkillProvider | SearchProvider;

/** A context block declaration. */
export interface ContextConfig {
  label: string;
  description?: string;
  /** Token budget enforced on writes (estimated with the library's heuristic). */
  maxTokens?: number;
  provider?: AnyContextProvider;
  /**
   * What the model sees when the block's value changes after the prompt was frozen: `"wait"` (default) nothing
   * until `refreshSystemPrompt()`; `"remind"` its current value from `reminder()`, sent after the cached prefix.
   * A remind block always has a section in the prompt, even when empty.
   */
  whenChanged?: WhenChanged;
}

/** How a block's change after the freeze reaches the model (the reference's names). */
export type WhenChanged = "wait" | "remind";

/** Options of `withContext(label, options)`. */
export type SessionContextOptions = Omit<ContextConfig, "label">;

/** A loaded block as `getContextBlock(s)` returns it. */
export interface ContextBlock {
  label: string;
  description?: string;
  content: string;
  tokens: number;
  maxTokens?: number;
  writable: boolean;
  isSkill: boolean;
  isSearchable: boolean;
  /** As configured (absent = `"wait"`). */
  whenChanged?: WhenChanged;
}

/** What a provider can do, detected once by duck typing. */
export interface ProviderCapabilities {
  /** The tag rendered in the prompt (first match of searchable, loadable, readonly, writable). */
  kind: "searchable" | "loadable" | "readonly" | "writable";
  isSearchable: boolean;
  isSkill: boolean;
  writable: boolean;
}

const hasFunction = (value: unknown, name: string): boolean =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as Record<string, unknown>)[name] === "function";

/**
 * The one place provider kinds are detected, in a fixed order: search (has `search`), skill (has `load`),
 * then writable (has `set`); anything else with `get` is read-only. A missing provider is an empty read-only block.
 */
export function detectProvider(provider: unknown): ProviderCapabilities {
  if (provider === undefined)
    return { kind: "readonly", isSearchable: false, isSkill: false, writable: false };
  if (!hasFunction(provider, "get")) {
    throw new SessionError("INVALID_ARGUMENT", "A context provider needs a get() method", {
      issues: [{ path: "provider", rule: "invalid" }],
    });
  }
  const isSearchable = hasFunction(provider, "search");
  const isSkill = hasFunction(provider, "load");
  const writable = hasFunction(provider, "set");
  const kind = isSearchable ? "searchable" : isSkill ? "loadable" : writable ? "writable" : "readonly";
  return { kind, isSearchable, isSkill, writable };
}

/** True when the provider has `set` (reference helper). */
export function isWritableProvider(provider: unknown): provider is WritableContextProvider {
  return hasFunction(provider, "get") && hasFunction(provider, "set");
}

/** True when the provider has `load` (reference helper). */
export function isSkillProvider(provider: unknown): provider is SkillProvider {
  return hasFunction(provider, "get") && hasFunction(provider, "load");
}

/** True when the provider has `search` (reference helper). */
export function isSearchProvider(provider: unknown): provider is SearchProvider {
  return hasFunction(provider, "get") && hasFunction(provider, "search");
}
