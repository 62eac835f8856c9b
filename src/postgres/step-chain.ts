/**
 * The agent step of several messages after the latest leaf as one statement (append-chain.ts), where it applies:
 * on one server (a cluster routes each append, citus/append-path.ts), without a change log (each append commits its
 * own log row, append-log.ts), a header block or media to offload, every message's id distinct and sealed (or not)
 * under one key guard. Anything else, or a chain that found an id stored already, is the general step's (step.ts).
 */

import type { SessionUsage } from "../contract/registry.js";
import type { Executor } from "../sql/engines/postgres/client.js";
import { guardParams } from "../sql/engines/postgres/owner-guard.js";
import type { Tables } from "../sql/engines/postgres/tables.js";
import { messageForm } from "../sql/sealing/postgres-stored-form.js";
import type { PreparedStep } from "../store/step.js";
import { appendChain, type ChainLink } from "./append-chain.js";

/**
 * True when the step could be one chain statement, before any form is made. `newIds`: a step of new ids
 * (step.ts writeNewPostgresStep), whose chain of one is the chain statement too: that is where its ids are checked.
 */
export function chainable(t: Tables, prepared: PreparedStep, logged: boolean, newIds = false): boolean {
  const { step, writes } = prepared;
  if (writes.length < (newIds ? 1 : 2) || step.parentId !== undefined || step.block || logged) return false;
  if (t.layout.routedAppend) return false;
  const ids = new Set<string>();
  for (const write of writes) {
    if (!write) return false;
    ids.add(write.message.id);
  }
  return ids.size === writes.length;
}

/**
 * Writes a {@link chainable} step as one statement; true when it did (each append checked as inserted), false when
 * it wrote nothing and the general step must run (with `newIds`, also when a session holds one of the ids).
 */
export async function writeChainStep(
  executor: Executor,
  t: Tables,
  { step, writes, check }: PreparedStep,
  usage: SessionUsage,
  newIds = false,
): Promise<boolean> {
  const links: ChainLink[] = [];
  let guard: string | undefined;
  for (const write of writes) {
    if (!write) return false;
    const stored = await messageForm(executor.query, t, step.sessionId, write.message, write.json);
    if (stored.attachments.length > 0) return false;
    // One guard in the statement: every form must rely on the same key check (or the same owner in clear).
    const relied = JSON.stringify(guardParams(t, stored.form));
    if (guard !== undefined && relied !== guard) return false;
    guard = relied;
    links.push({ message: write.message, form: stored.form });
  }
  const registry = { source: step.source ?? null, owner: step.owner ?? null, usage };
  if (!(await appendChain(executor, t, step.sessionId, links, registry, newIds))) return false;
  for (const [i, write] of writes.entries()) check(i, { result: { inserted: true }, json: write!.json });
  return true;
}
