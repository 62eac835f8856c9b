import type { AppendResult, SessionMessage } from "../types.js";
import { publishAppend } from "./feed/publish.js";
import { assertBlockKey, assertContent } from "./keys.js";
import type { ProviderContext } from "./provider.js";
import { checkUsage } from "./registry-schema.js";
import type { SessionUsage } from "./types.js";
import { type PreparedWrite, prepareAppend } from "./write-policy.js";
import { answer, type Written } from "./written.js";

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
  /** The registry row must exist, with this `source` when given; else `NOT_FOUND` and nothing is written. */
  source?: string | undefined;
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

/**
 * A store that writes a {@link StepWrite} atomically (memory: checked, then applied synchronously; SQLite: one
 * `BEGIN IMMEDIATE`; Postgres: one statement for one message, else one transaction on one client).
 */
export interface StepCapableStore {
  writeStep(step: StepWrite): Promise<void>;
}

/** A step prepared once: each message's write (null: an echoed overlay, stored as nothing) and its usage, checked. */
export interface PreparedStep {
  step: Omit<StepWrite, "check">;
  writes: readonly (PreparedWrite | null)[];
  usage: SessionUsage | undefined;
  /**
   * Takes each append's record, in order, as it is written: runs the step's `check` on its result (a throw rolls
   * the step back) and keeps it to publish once the step committed.
   */
  check: (index: number, written: Written<AppendResult>) => void;
}

/**
 * The step's pipeline, as a provider's (store/provider.ts): prepares every part once under the store's policy
 * (bad input never starts a write), lets the backend write it all or nothing, then publishes each append it
 * committed.
 */
export async function runStep(
  context: ProviderContext,
  step: StepWrite,
  write: (prepared: PreparedStep) => Promise<void>,
): Promise<void> {
  const writes = step.messages.map((message) =>
    prepareAppend(message, step.parentId, context.policy, undefined),
  );
  if (step.block) {
    assertBlockKey(step.block.key);
    assertContent(step.block.content);
  }
  const usage = step.usage === undefined ? undefined : checkUsage(step.usage);
  const results: { result: AppendResult; logged: number | undefined }[] = [];
  const check = (index: number, written: Written<AppendResult>) => {
    const result = answer(written);
    step.check?.(index, result);
    results[index] = { result, logged: written.logged };
  };
  await write({ step, writes, usage, check });
  for (const [index, { result, logged }] of results.entries()) {
    const message = step.messages[index];
    if (!message || !writes[index]) continue;
    const parentId = index === 0 ? step.parentId : step.messages[index - 1]?.id;
    await publishAppend(context.feed, step.sessionId, message.id, parentId, result, logged);
  }
}

/** True when the store writes steps atomically (MemoryStore, SqliteStore, PostgresStore). */
export function hasStepWrites(store: object): store is StepCapableStore {
  return typeof (store as Partial<StepCapableStore>).writeStep === "function";
}
