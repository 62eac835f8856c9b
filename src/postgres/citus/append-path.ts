/**
 * How an append (append.ts) runs in the Citus layout: one delegated call (append-function.ts), with its change-log
 * row in the call's transaction when logged (routed-log.ts), unless the content is sealed (the call carries no key
 * guard, key-guard.ts: a sealed append runs the guarded statement, after an explicit parent read first under the
 * head lock, parent.ts).
 */

import { type AppendTry, attemptOf, retried } from "../append-attempt.js";
import type { Outcome } from "../append-outcome.js";
import type { CitusAppend } from "../citus-steps.js";
import { routedCall } from "./append-function.js";
import { afterLockedParent } from "./parent.js";
import { withLogRow } from "./routed-log.js";

/** Runs `append` (a try of it: `on`) on a Citus store. */
export function citusAppend(on: AppendTry, append: CitusAppend): Promise<Outcome | null> {
  const { executor, t, sessionId } = on;
  const { messageId, parentId, sql, params, log } = append;
  if (append.guarded) {
    const plain = attemptOf(on, () => [sql, params]);
    // Fresh (the parent is read under the head lock): no retries.
    if (typeof parentId === "string")
      return afterLockedParent(executor, t, sessionId, parentId, params, plain);
    return retried(on, plain, false);
  }
  const routed = attemptOf(on, routedCall(t, params, on.registry, append.clear));
  // A logged routed append: the call and the log row in one transaction.
  if (log) return retried(on, withLogRow(routed, t, log, sessionId, messageId, parentId), true);
  return retried(on, routed, false);
}
