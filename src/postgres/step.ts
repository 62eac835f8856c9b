/**
 * An agent step on Postgres, all or nothing: the messages, the header block and the registry counters.
 *
 * - One message after the leaf, no block, no media (the usual step without tools): ONE statement — the append
 *   statement also updates the registry row — so one round trip and one commit (writeSingle).
 * - Several new messages after the leaf, on one server, without a change log, block or media: ONE statement too,
 *   the chain's (step-chain.ts).
 * - Otherwise one transaction on one client (`BEGIN` … `COMMIT`, one WAL flush): the first append locks the head
 *   itself, the last one also takes the registry counters. Should a concurrent writer have stored one of the ids
 *   after the transaction's first snapshot, the unique violation aborts the transaction; it then runs again with
 *   the head locked first, so every statement reads a snapshot that includes all earlier writes to the session.
 */

import type { SessionMessage } from "../contract/message.js";
import type { AppendResult } from "../contract/provider.js";
import type { SessionUsage } from "../contract/registry.js";
import type { StepWrite } from "../contract/step.js";
import { SessionError } from "../errors.js";
import type { PostgresBackend } from "../sql/backend/postgres.js";
import { PostgresBlockStore } from "../sql/context-store/postgres.js";
import { type Executor, sqlState } from "../sql/engines/postgres/client.js";
import { statement, type Tables } from "../sql/engines/postgres/tables.js";
import { joined, releaseMessages } from "../sql/media/postgres.js";
import { storedJson } from "../sql/message-reads/postgres.js";
import { countersSql } from "../sql/registry/postgres.js";
import { NOW, nextActivity, usageAssignments, usageFits } from "../sql/registry/postgres-writes.js";
import { messageForm, type StoredForm, writeWithAttachments } from "../sql/sealing/postgres-stored-form.js";
import { replaced } from "../store/feed/change-rows.js";
import { type PreparedStep, runStep } from "../store/step.js";
import { assertUsageFits, type UsageTotals, usageBounds, usageDeltas } from "../store/usage-totals.js";
import type { Written } from "../store/written.js";
import { type AppendRequest, appendRow } from "./append.js";
import { lockSql } from "./append-attempt.js";
import { appendLog, logInTransaction } from "./feed/logged-write.js";
import { updateRow } from "./rewrite.js";
import { chainable, writeChainStep } from "./step-chain.js";
import { deleteRows } from "./writes.js";

// The step as the backend sees it: its `check` is the pipeline's (PreparedStep.check), given on its own.
type Step = PreparedStep["step"];
type Check = PreparedStep["check"];

const NO_USAGE = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0 };

// `addUsage` of the registry on the row of source `$2` and owner `$3` only (each NULL for any), $4..$8 the
// deltas and $9..$18 their bounds: no row updated is a missing row, another's, or a refused total.
const stepUsageSql = statement(
  (
    t,
  ) => `UPDATE ${t.sessions} SET ${usageAssignments(4)}, updated_at = ${NOW}, activity = ${nextActivity(t, true)}
    WHERE id = $1 AND ($2::text IS NULL OR source = $2::text) AND ($3::text IS NULL OR owner = $3::text)
      AND ${usageFits(9)} RETURNING id`,
);

/** The step's guard as parameters `$2`, `$3` of `stepUsageSql` and `countersSql`. */
const guardParams = (step: Step) => [step.source ?? null, step.owner ?? null];

/**
 * Adds the step's usage to the registry row, which must exist with the step's `source` and `owner` when given:
 * one UPDATE checks and writes, so a row another owner registered meanwhile is never touched.
 */
async function addUsage(executor: Executor, t: Tables, step: Step, usage: SessionUsage) {
  // Zero counters when the step has no usage: the row's activity time moves all the same.
  const params = [step.sessionId, ...guardParams(step), ...usageDeltas(usage), ...usageBounds(usage)];
  const [row] = await executor.query(stepUsageSql(t), params, true);
  // Last, so a missing session rolls back the appends (which would have created its head); a refused total is
  // told apart by refuseUsage once the step has rolled back.
  if (!row) throw new SessionError("NOT_FOUND", `Session not found: ${step.sessionId}`);
}

/**
 * The common step — one message after the latest leaf, no header block, no media to offload — as ONE statement
 * (its own transaction: one round trip and one commit instead of five): the append statement also updates the
 * registry row, and aborts itself when there is none. Its `check` sees an inserted message after the commit
 * (nothing to reject there: a check only rejects a message stored before); a duplicate wrote nothing, so it is
 * checked first and then the registry row takes the usage, as in the transaction.
 */
async function writeSingle(
  executor: Executor,
  t: Tables,
  step: Step,
  check: Check,
  usage: SessionUsage,
  stored: SessionMessage,
  json: string,
  form: StoredForm,
  log: AppendRequest["log"],
): Promise<void> {
  const { sessionId } = step;
  const registry = { source: step.source ?? null, owner: step.owner ?? null, usage };
  const appended = await appendRow(executor, t, sessionId, stored, {
    parentId: undefined,
    form,
    registry,
    log,
  });
  if (appended.result.inserted) {
    check(0, { ...appended, json });
    return;
  }
  check(0, { ...appended, json: (await storedJson(executor, t, sessionId, stored.id)) ?? json });
  await addUsage(executor, t, step, usage);
}

/** Writes a prepared step all or nothing (see the module comment). */
export async function writePostgresStep(store: PostgresBackend, prepared: PreparedStep): Promise<void> {
  const t = store.tables;
  const { step } = prepared;
  // Zero counters when the step has no usage: the row's activity time moves all the same.
  const usage = prepared.usage ?? NO_USAGE;
  const executor = await store.ready();
  // With a change log each inserted message commits with its row (append-log.ts); the feed publishes its cursor.
  const log = await appendLog(store.changeLog, "append");
  try {
    await writeStep(executor, t, prepared, usage, log, store);
  } catch (error) {
    if (error instanceof SessionError && error.code === "NOT_FOUND")
      await refuseUsage(executor, t, step, usage);
    throw error;
  }
}

/**
 * A step of messages whose ids no session may hold yet (the Mastra door's save, TimedMessages.appendNew): on one
 * server, without a change log, block or media, the chain statement with its ids checked in it (append-chain.ts
 * `newIds`), so the look-up is no round trip of its own. True when it wrote the step; false when it wrote nothing
 * (an id is held, or the step is not one this writes): the caller then looks the ids up and writes the general way.
 */
export async function writeNewPostgresStep(store: PostgresBackend, step: StepWrite): Promise<boolean> {
  const t = store.tables;
  // Known before the step is prepared: a cluster routes each append; a change log commits a row with each.
  if (store.changeLog || t.layout.routedAppend) return false;
  let wrote = false;
  // The store's pipeline (policy, checks, the feed), as writeStep's; nothing to publish when nothing was written.
  await runStep(store, step, async (prepared) => {
    if (!chainable(t, prepared, false, true)) return;
    const usage = prepared.usage ?? NO_USAGE;
    const executor = await store.ready();
    try {
      wrote = await writeChainStep(executor, t, prepared, usage, true);
    } catch (error) {
      if (error instanceof SessionError && error.code === "NOT_FOUND")
        await refuseUsage(executor, t, prepared.step, usage);
      throw error;
    }
  });
  return wrote;
}

async function writeStep(
  executor: Executor,
  t: Tables,
  whole: PreparedStep,
  usage: SessionUsage,
  log: AppendRequest["log"],
  store: PostgresBackend,
): Promise<void> {
  const { step, check, writes: prepared } = whole;
  const only = prepared.length === 1 ? prepared[0] : undefined;
  if (only && step.parentId === undefined && !step.block) {
    // Sealed (an encrypted owner's) or offloaded as every write is (stored-form.ts).
    const stored = await messageForm(executor.query, t, step.sessionId, only.message, only.json);
    if (stored.attachments.length === 0) {
      return writeSingle(executor, t, step, check, usage, only.message, only.json, stored.form, log);
    }
  }
  // Several messages after the leaf: one statement where it applies (step-chain.ts).
  if (chainable(t, whole, log !== undefined) && (await writeChainStep(executor, t, whole, usage))) return;
  try {
    await writeInTransaction(executor, t, whole, usage, false, log, store);
  } catch (error) {
    // 25P02: a statement failed inside the transaction and was retried (a concurrent writer stored the same id
    // after this transaction's first snapshot): the transaction rolled back; run it again, head locked first.
    if (sqlState(error) !== "25P02") throw error;
    await writeInTransaction(executor, t, whole, usage, true, log, store);
  }
}

/**
 * After a step failed `NOT_FOUND` (rolled back, nothing written): the registry row's totals may be what refused
 * it (the append statement reports a refused total like a missing row). Throws that refusal when the row, of the
 * step's source and owner, is there and the usage does not fit it; else the caller reports `NOT_FOUND`. Read after the
 * rollback, so a row another process changed in between can make a refused total read as `NOT_FOUND`.
 */
async function refuseUsage(executor: Executor, t: Tables, step: Step, usage: SessionUsage) {
  const [row] = await executor.query<UsageTotals>(
    countersSql(t),
    [step.sessionId, ...guardParams(step)],
    true,
  );
  if (row) assertUsageFits(step.sessionId, row, usage);
}

/**
 * A step's replacements and removal, as `updateMessage` and `deleteMessages` write them, in the step's transaction
 * (`tx`) under the head lock it holds (`num`): the registry update that ends the step checks its guard, so a
 * session another owner registered meanwhile rolls them back.
 */
async function replaceAndRemove(
  tx: Executor,
  t: Tables,
  { step, replaces, replaced: onReplaced, removed }: PreparedStep,
  num: string | undefined,
  log: PostgresBackend["changeLog"],
): Promise<void> {
  const { sessionId } = step;
  for (const [i, { message, json }] of replaces.entries()) {
    const written = await writeWithAttachments(tx, t, sessionId, message, json, true, async (form, inner) =>
      logInTransaction(
        log,
        inner,
        sessionId,
        replaced(message.id),
        await updateRow(inner, t, sessionId, message, form),
      ),
    );
    onReplaced(i, { ...written, json });
  }
  const ids = step.remove ?? [];
  if (ids.length === 0) return;
  if (num !== undefined) await releaseMessages(tx.query, t, { num, id: sessionId }, ids);
  await deleteRows(tx, t, sessionId, ids, step.removeTip);
  const written: Written<null> = { result: null };
  removed(await logInTransaction(log, tx, sessionId, () => ({ type: "delete", ids: [...ids] }), written));
}

/**
 * The general step in one transaction: `BEGIN`, the appends (the first locks the head itself; the last also takes
 * the registry counters unless it found its id stored), the header block, `COMMIT`. `lockFirst` locks the head
 * in a statement of its own first, so no append can meet a row its snapshot missed.
 */
async function writeInTransaction(
  executor: Executor,
  t: Tables,
  whole: PreparedStep,
  usage: SessionUsage,
  lockFirst: boolean,
  log: AppendRequest["log"],
  store: PostgresBackend,
): Promise<void> {
  const { step, check, writes: prepared } = whole;
  const { sessionId } = step;
  const registry = { source: step.source ?? null, owner: step.owner ?? null, usage };
  await executor.transaction(async (query) => {
    const tx = joined(executor, query);
    if (lockFirst || prepared.length === 0) {
      const [head] = await query<{ num: string }>(lockSql(t), [sessionId, new Date().toISOString()]);
      // A step that replaces or removes appends nothing (store/step.ts), so it always holds the head lock here.
      await replaceAndRemove(tx, t, whole, head?.num, store.changeLog);
    }
    let at: string | null | undefined = step.parentId;
    let registered = false;
    for (let i = 0; i < prepared.length; i++) {
      const write = prepared[i];
      const message = step.messages[i]!;
      let written: Written<AppendResult>;
      if (!write) written = { result: { inserted: false, message } };
      else {
        const { message: stored, json } = write;
        const parent = at;
        const last = i === prepared.length - 1;
        const appended = await writeWithAttachments(tx, t, sessionId, stored, json, false, (form, inner) =>
          appendRow(inner, t, sessionId, stored, {
            parentId: parent,
            expectedLeafId: step.guard && parent !== undefined ? parent : undefined,
            form,
            registry: last ? registry : undefined,
            log,
          }),
        );
        registered = last && appended.result.inserted;
        const answer = appended.result.inserted
          ? json
          : ((await storedJson(tx, t, sessionId, stored.id)) ?? json);
        written = { ...appended, json: answer };
      }
      check(i, written);
      at = message.id;
    }
    const ready = async () => tx;
    if (step.block)
      await new PostgresBlockStore(ready, t).setBlock(step.block.key, step.block.content, { sessionId });
    if (!registered) await addUsage(tx, t, step, usage);
  });
}
