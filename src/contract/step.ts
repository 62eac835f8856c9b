// Optional store capability: an agent step (messages, a header block, registry counters) written all or nothing.
import type { SessionMessage } from "./message.js";
import type { AppendResult, DeleteTip } from "./provider.js";
import type { SessionUsage } from "./registry.js";
import type { WritePolicy } from "./store.js";

/**
 * One step of a writer that keeps a header block and registry counters beside its messages (the agent storages):
 * a chain of messages, the block and the registry update, written together or not at all.
 */
export interface StepWrite {
  sessionId: string;
  /** Appended as a chain under {@link parentId}, in order. */
  messages: readonly SessionMessage[];
  /** The first message's parent: undefined = after the latest leaf (read under the session's lock), null = a root. */
  parentId: string | null | undefined;
  /** Each append after the first fails with `CONFLICT` unless its parent is still the latest leaf. */
  guard: boolean;
  /** A Session's write policy, applied to the messages before the store's (as a Session's own appends). */
  policy?: WritePolicy | undefined;
  /** The registry row must exist, with this `source` when given; else `NOT_FOUND` and nothing is written. */
  source?: string | undefined;
  /**
   * The registry row must have this owner when given (an owner-scoped writer's), checked in the step's own
   * transaction; another owner's row, or an unowned one, is `NOT_FOUND` and nothing is written.
   */
  owner?: string | undefined;
  /**
   * Stored messages of the session rewritten in place before anything else, as `updateMessage` (an identical one
   * writes nothing; one not stored is `NOT_FOUND` and nothing is written). Only in a step without `messages`.
   */
  replace?: readonly SessionMessage[] | undefined;
  /**
   * Message ids deleted after `replace`, as `deleteMessages` (children spliced onto their parents; an id not stored
   * is skipped). Only in a step without `messages`.
   */
  remove?: readonly string[] | undefined;
  /** Where a tip deleted by `remove` goes, as `deleteMessages`' option (default `"newest-leaf"`). */
  removeTip?: DeleteTip | undefined;
  /** A context block to set in the same transaction. */
  block?: { key: string; content: string } | undefined;
  /** Added to the registry row's counters; without it the row is only touched (its activity time). */
  usage?: SessionUsage | undefined;
  /**
   * Sees each append's result; a throw for a result that was not inserted (an id stored already) rolls the whole
   * step back. Only such results may be rejected: a one-message Postgres step is one statement, committed before
   * its check sees an inserted message.
   */
  check?: ((index: number, result: AppendResult) => void) | undefined;
}

/** Whose registry row a step may write: the {@link StepWrite} fields its backend checks in the step's transaction. */
export type StepGuard = Pick<StepWrite, "source" | "owner">;

/**
 * A store that writes a {@link StepWrite} atomically (memory: checked, then applied synchronously; SQLite: one
 * `BEGIN IMMEDIATE`; Postgres: one statement for one message, else one transaction on one client).
 */
export interface StepCapableStore {
  writeStep(step: StepWrite): Promise<void>;
}

/** True when the store writes steps atomically (MemoryStore, SqliteStore, PostgresStore). */
export function hasStepWrites(store: object): store is StepCapableStore {
  return typeof (store as Partial<StepCapableStore>).writeStep === "function";
}
