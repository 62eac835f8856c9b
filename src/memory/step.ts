/**
 * An agent step on a MemoryStore, all or nothing (as SQLite's and Postgres's `step.ts`): the messages (or the
 * replacements and removals), the header block and the registry counters. Everything that can fail — a guard's `CONFLICT`, a missing parent, a `check`
 * refusing a message stored already, the registry row and its totals — is decided against the stored data first,
 * then every change is applied, all in one synchronous stretch, so no other write of this process falls between.
 */

import type { AppendResult } from "../contract/provider.js";
import { SessionError } from "../errors.js";
import { ownTime } from "../message/created-at.js";
import type { PreparedStep } from "../store/step.js";
import type { PreparedWrite } from "../store/write-policy.js";
import type { Written } from "../store/written.js";
import type { MemoryBackend as MemoryStore } from "./data.js";
import {
  deleteRows,
  insertRow,
  leafConflict,
  parentNotFound,
  parentRow,
  replaceRow,
  storedJson,
} from "./rows.js";

/** Writes a prepared step (see the module comment). */
export async function writeMemoryStep(
  store: MemoryStore,
  { step, writes, usage, check, replaces, replaced, removed }: PreparedStep,
): Promise<void> {
  const { sessionId } = step;
  const data = store.sessionData(sessionId, false);
  // A step that replaces or removes appends nothing (store/step.ts): its rows are found before anything changes.
  const targets = replaces.map(({ message }) => {
    const row = data?.rows.get(message.id);
    if (!row) throw new SessionError("NOT_FOUND", `Message "${message.id}" is not in session "${sessionId}"`);
    return row;
  });
  // The appends to make, and the ids this step stores (with their JSON) on top of the stored ones.
  const planned: { write: PreparedWrite; parentId: string | null | undefined }[] = [];
  const added = new Map<string, string>();
  let leaf = data?.leaf?.id ?? null;
  let at = step.parentId;
  writes.forEach((write, i) => {
    const message = step.messages[i]!;
    let written: Written<AppendResult> = { result: { inserted: false, message } };
    if (write) {
      const { id } = write.message;
      const row = data?.rows.get(id);
      const json = row ? storedJson(store, row) : added.get(id);
      if (json !== undefined) written = { result: { inserted: false }, json };
      else {
        if (step.guard && at !== undefined && leaf !== at) throw leafConflict(sessionId, leaf, at);
        if (typeof at === "string" && !data?.rows.has(at) && !added.has(at))
          throw parentNotFound(at, sessionId);
        planned.push({ write, parentId: at });
        added.set(id, write.json);
        leaf = id;
        written = { result: { inserted: true }, json: write.json };
      }
    }
    check(i, written);
    at = message.id;
  });
  // Last of the checks, first of the changes: a missing row or a refused total throws before anything changed.
  store.registry.stepUsage(sessionId, { source: step.source, owner: step.owner }, usage);
  replaces.forEach(({ message, json }, i) => {
    replaced(i, { result: replaceRow(store, targets[i]!, message, json), json });
  });
  if (step.remove && step.remove.length > 0) {
    if (data) deleteRows(store, data, sessionId, step.remove, step.removeTip);
    removed({});
  }
  if (planned.length > 0) {
    const target = store.sessionData(sessionId, true)!;
    const now = new Date().toISOString();
    for (const { write, parentId } of planned) {
      const parent = parentRow(target, parentId, sessionId);
      insertRow(store, target, write.message, write.json, parent, ownTime(write.message) ?? now);
    }
  }
  // Synchronous inside (key and content were checked when the step was prepared).
  if (step.block)
    await store.blocks.setBlock(step.block.key, step.block.content, { sessionId: step.sessionId });
}
