/**
 * `memoryTool`: a backend for Anthropic's memory tool (`memory_20250818`) over a store's context blocks. The whole
 * /memories directory of one owner (or one session) is one block; every change is a conditional write over the
 * text it was computed from, run again on a fresh read when another writer got there first, so two concurrent
 * edits never lose one.
 */
import { memoryDirectoryKey } from "../../context/block-keys.js";
import {
  type ConditionalBlockStore,
  type ContextRecord,
  hasConditionalWrite,
  hasContextStorage,
} from "../../contract/context.js";
import type { SessionStore } from "../../contract/store.js";
import { errorMessage, SessionError } from "../../errors.js";
import { parseInput } from "../../schema/parse.js";
import { isOwnerId } from "../../store/owner.js";
import { runCommand } from "./commands.js";
import {
  DEFAULT_MEMORY_TOOL_LIMITS,
  type MemoryFiles,
  type MemoryToolLimits,
  parseFiles,
  serializeFiles,
} from "./directory.js";
import { checkInput, type MemoryToolCommand } from "./input.js";
import { memoryScopeSchema, memoryToolOptionsSchema } from "./options.js";

/** Whose memory directory: an owner's (shared by all their sessions) or one session's. */
export type MemoryScope = { owner: string; sessionId?: never } | { sessionId: string; owner?: never };

/** Options of {@link memoryTool}. */
export type MemoryToolOptions = MemoryScope & {
  /** A store with context blocks and conditional writes (every built-in store). */
  store: SessionStore;
  /** Sizes to enforce instead of the defaults ({@link DEFAULT_MEMORY_TOOL_LIMITS}). */
  limits?: Partial<MemoryToolLimits>;
  /** How often a command is run when other writers keep changing the directory in between (default 8). */
  maxAttempts?: number;
};

type Command<C extends MemoryToolCommand["command"]> = Extract<MemoryToolCommand, { command: C }>;

/** The handler object of the Anthropic SDK's `betaMemoryTool(handlers)`: one method per command. */
export interface MemoryToolHandlers {
  view(command: Command<"view">): Promise<string>;
  create(command: Command<"create">): Promise<string>;
  str_replace(command: Command<"str_replace">): Promise<string>;
  insert(command: Command<"insert">): Promise<string>;
  delete(command: Command<"delete">): Promise<string>;
  rename(command: Command<"rename">): Promise<string>;
}

/** What {@link memoryTool} returns. */
export interface MemoryTool {
  /** The block key the directory is stored under (to erase it: `store.blocks.deleteBlocks([key])`). */
  readonly key: string;
  /** Runs one command; never throws: every failure is an error string for the model. */
  execute(input: MemoryToolCommand, options?: unknown): Promise<string>;
  /** The same commands in the shape of the Anthropic SDK's memory tool helper. */
  readonly handlers: MemoryToolHandlers;
  /** The files as stored now, by path (for an app that shows or exports them). */
  files(): Promise<MemoryFiles>;
}

const DEFAULT_ATTEMPTS = 8;

/** The limits given, without the ones given as undefined (which keep their default). */
function definedOf(
  limits: { [K in keyof MemoryToolLimits]?: number | undefined } | undefined,
): Partial<MemoryToolLimits> {
  return Object.fromEntries(Object.entries(limits ?? {}).filter(([, value]) => value !== undefined));
}

/** The block key of a scope's memory directory: `_memories_owner_<owner>` or `_memories_session_<sessionId>`. */
export function memoryToolKey(scope: MemoryScope): string {
  return keyOf(parseInput(memoryScopeSchema, scope));
}

function keyOf(scope: { owner?: string | undefined; sessionId?: string | undefined }): string {
  // "owner_" and "session_" never overlap; erasure removes these keys (context/block-keys.ts).
  return scope.owner !== undefined
    ? memoryDirectoryKey("owner", scope.owner)
    : memoryDirectoryKey("session", scope.sessionId as string);
}

/**
 * Whose the directory is, recorded with its row (contract/context.ts ContextRecord) so an erasure of the owner or
 * the session removes it; none for an owner id the registry could not hold (no owner's erasure could name it).
 */
function directoryRecord(scope: MemoryScope): ContextRecord | undefined {
  const { owner, sessionId } = scope as { owner?: string; sessionId?: string };
  if (owner !== undefined) return isOwnerId(owner) ? { owner } : undefined;
  return sessionId === undefined ? undefined : { sessionId };
}

/**
 * A backend for Anthropic's memory tool over `store`'s context blocks, scoped to one owner or one session:
 * `anthropic.tools.memory_20250818({ execute: memoryTool({ store, owner }).execute })` with the AI SDK, or
 * `betaMemoryTool(memoryTool({ store, owner }).handlers)` with the Anthropic SDK.
 */
export function memoryTool(options: MemoryToolOptions): MemoryTool {
  const checked = parseInput(memoryToolOptionsSchema, options);
  const key = keyOf(checked);
  const record = directoryRecord(options);
  const limits: MemoryToolLimits = { ...DEFAULT_MEMORY_TOOL_LIMITS, ...definedOf(checked.limits) };
  const attempts = checked.maxAttempts ?? DEFAULT_ATTEMPTS;
  const blocks = conditionalBlocks(options.store);

  const execute = async (input: MemoryToolCommand): Promise<string> => {
    const checked = checkInput(input, limits);
    if (!checked.ok) return checked.error;
    try {
      for (let attempt = 0; attempt < attempts; attempt++) {
        const stored = await blocks.getBlock(key);
        const result = runCommand(parseFiles(stored, key), checked.command, limits);
        if (result.next === undefined) return result.output;
        // Written only over the text the result was computed from; otherwise another writer came first, and the
        // command runs again on what it wrote (it may now answer differently, e.g. "already exists").
        if (await blocks.setBlockIf(key, stored, serializeFiles(result.next), record)) return result.output;
      }
      return (
        `Error: The memory directory was changed by other writers ${attempts} times while this command ran; ` +
        "nothing was written. Run it again"
      );
    } catch (error) {
      return `Error: ${errorMessage(error)}`;
    }
  };

  const handlers: MemoryToolHandlers = {
    view: execute,
    create: execute,
    str_replace: execute,
    insert: execute,
    delete: execute,
    rename: execute,
  };
  return {
    key,
    execute: (input) => execute(input),
    handlers,
    files: async () => parseFiles(await blocks.getBlock(key), key),
  };
}

function conditionalBlocks(store: SessionStore): ConditionalBlockStore {
  if (typeof store !== "object" || store === null || !hasContextStorage(store)) {
    throw new SessionError(
      "UNSUPPORTED",
      "The memory tool needs a store with context blocks (store.blocks)",
      {
        issues: [{ path: "store", rule: "invalid" }],
      },
    );
  }
  if (!hasConditionalWrite(store.blocks)) {
    // Without it, two concurrent edits would silently lose one: refused rather than risked.
    throw new SessionError(
      "UNSUPPORTED",
      "The memory tool needs a block store with conditional writes (blocks.setBlockIf), so that no concurrent edit is lost",
      { issues: [{ path: "store", rule: "invalid" }] },
    );
  }
  return store.blocks;
}
