// A step's write checked before any backend runs it. Hand-written, not schemas: an agent step runs on every agent
// append, where the benchmark counts each allocation (docs/HARDENING.md, "What stays hand-written").
import type { AppendResult, UpdateResult } from "../contract/provider.js";
import type { SessionUsage } from "../contract/registry.js";
import type { StepWrite } from "../contract/step.js";
import { SessionError } from "../errors.js";
import { assertId } from "../message/ids.js";
import { publishAppend, publishDelete, publishUpdate } from "./feed/publish.js";
import { assertBlockKey, assertContent } from "./keys.js";
import { parseOwner } from "./owner.js";
import type { ProviderContext } from "./provider.js";
import { checkUsage } from "./registry-schema.js";
import { type PreparedWrite, prepareAppend, prepareServerWrite } from "./write-policy.js";
import { answer, type Logged, type Written } from "./written.js";

/** A step prepared once: each message's write (null: an echoed overlay, stored as nothing) and its usage, checked. */
export interface PreparedStep {
  step: Omit<StepWrite, "check">;
  writes: readonly (PreparedWrite | null)[];
  usage: SessionUsage | undefined;
  /** The step's `replace` messages, prepared as `updateMessage` prepares one. */
  replaces: readonly PreparedWrite[];
  /** Takes each replacement's record, in order, to publish once the step committed. */
  replaced: (index: number, written: Written<UpdateResult>) => void;
  /** Takes the record of the step's `remove` (its logged cursor), to publish once the step committed. */
  removed: (logged: Logged) => void;
  /**
   * Takes each append's record, in order, as it is written: runs the step's `check` on its result (a throw rolls
   * the step back) and keeps it to publish once the step committed.
   */
  check: (index: number, written: Written<AppendResult>) => void;
}

/**
 * The step's pipeline, as a provider's (store/provider.ts): prepares every part once under the store's policy
 * (bad input never starts a write), lets the backend write it all or nothing, then publishes what it committed:
 * each replacement that changed a message, the removal, each append.
 */
export async function runStep(
  context: ProviderContext,
  step: StepWrite,
  write: (prepared: PreparedStep) => Promise<void>,
): Promise<void> {
  const writes = step.messages.map((message) =>
    prepareAppend(message, step.parentId, context.policy, undefined, step.policy),
  );
  if (step.block) {
    assertBlockKey(step.block.key, "block.key");
    assertContent(step.block.content);
  }
  const usage = step.usage === undefined ? undefined : checkUsage(step.usage);
  if (step.owner !== undefined) parseOwner(step.owner);
  const replaces = (step.replace ?? []).map((message) => prepareServerWrite(message, context.policy));
  const remove = step.remove ?? [];
  if (!Array.isArray(remove))
    throw new SessionError("INVALID_ARGUMENT", "A step's remove must be an array of ids", {
      issues: [{ path: "remove", rule: "type" }],
    });
  for (const [index, id] of remove.entries()) assertId(id, "A message id", `remove.${index}`);
  if (step.messages.length > 0 && (replaces.length > 0 || remove.length > 0)) {
    // Every backend decides a step's appends against the stored rows; rows the same step changes first would not
    // be seen alike everywhere.
    throw new SessionError("INVALID_ARGUMENT", "A step that replaces or removes messages appends none", {
      issues: [{ path: "messages", rule: "conflict" }],
    });
  }
  const results: { result: AppendResult; logged: number | undefined }[] = [];
  const check = (index: number, written: Written<AppendResult>) => {
    const result = answer(written);
    step.check?.(index, result);
    results[index] = { result, logged: written.logged };
  };
  const updates: Written<UpdateResult>[] = [];
  let deleted: Logged | undefined;
  await write({
    step,
    writes,
    usage,
    check,
    replaces,
    replaced: (index, written) => {
      updates[index] = written;
    },
    removed: (logged) => {
      deleted = logged;
    },
  });
  // Published in the order written: the replacements, the removal, then the appends.
  for (const [index, written] of updates.entries()) {
    const result = answer(written);
    if (result.updated) {
      await publishUpdate(context.feed, step.sessionId, replaces[index]!.message.id, result, written.logged);
    }
  }
  if (deleted && remove.length > 0) await publishDelete(context.feed, step.sessionId, remove, deleted.logged);
  for (const [index, { result, logged }] of results.entries()) {
    const message = step.messages[index];
    if (!message || !writes[index]) continue;
    const parentId = index === 0 ? step.parentId : step.messages[index - 1]?.id;
    await publishAppend(context.feed, step.sessionId, message.id, parentId, result, logged);
  }
}
