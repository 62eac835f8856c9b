import type { AppendResult } from "../contract/provider.js";
import type { SessionUsage } from "../contract/registry.js";
import type { StepWrite } from "../contract/step.js";
import { publishAppend } from "./feed/publish.js";
import { assertBlockKey, assertContent } from "./keys.js";
import { assertOwner } from "./owner.js";
import type { ProviderContext } from "./provider.js";
import { checkUsage } from "./registry-schema.js";
import { type PreparedWrite, prepareAppend } from "./write-policy.js";
import { answer, type Written } from "./written.js";

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
  if (step.owner !== undefined) assertOwner(step.owner);
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
