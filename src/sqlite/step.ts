/**
 * An agent step in one SQLite transaction (`BEGIN IMMEDIATE` … `COMMIT`): the messages, the header block and the
 * registry counters, or the replacements and removals of a step that appends nothing. Everything inside is synchronous (the driver's transactions are), so no other write of this
 * process can slip into the transaction, and a throw anywhere rolls the step back whole.
 */

import type { AppendResult, DeleteTip } from "../contract/provider.js";
import { SessionError } from "../errors.js";
import type { SqliteBackend } from "../sql/backend/sqlite.js";
import { KEEP_RECORD } from "../sql/context-records/sqlite.js";
import { keptRecord, type RecordRow } from "../sql/context-store/records.js";
import { storedBlock } from "../sql/context-store/sqlite-sealed.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { releaseMessages } from "../sql/media/sqlite.js";
import { storedJson } from "../sql/message-reads/sqlite.js";
import {
  refuseUsage,
  STEP_GUARD,
  stepGuardParams,
  USAGE_FITS,
  USAGE_SET,
} from "../sql/registry/sqlite-usage.js";
import { inserted, replaced } from "../store/feed/change-rows.js";
import type { PreparedStep } from "../store/step.js";
import { usageBounds, usageDeltas } from "../store/usage-totals.js";
import type { Logged, Written } from "../store/written.js";
import { type AppendContext, appendRow } from "./append.js";
import { NEXT_ACTIVITY } from "./registry.js";
import { writeMessageRow } from "./write-row.js";
import { deleteRows, updateRow } from "./writes.js";

const GUARDED_ROW = `SELECT 1 AS found FROM agent_sessions WHERE id = ? AND ${STEP_GUARD}`;

const notFound = (sessionId: string) => new SessionError("NOT_FOUND", `Session not found: ${sessionId}`);

/** Deletes messages as `deleteMessages` does, inside the step's transaction; answers the logged cursor. */
function removeRows(
  store: SqliteBackend,
  sessionId: string,
  ids: readonly string[],
  tip?: DeleteTip,
): Logged {
  const { driver } = store;
  const head = driver.get<{ num: number }>("SELECT num FROM agent_session_heads WHERE session_id = ?", [
    sessionId,
  ]);
  if (head) releaseMessages(driver, head.num, ids);
  deleteRows(driver, sessionId, ids, tip);
  const log = store.changeLog;
  return log ? { logged: log.record({ type: "delete", ids: [...ids], sessionId }) } : {};
}

const FIRST_MISSING = `SELECT j.value FROM json_each(?) j WHERE NOT EXISTS (
    SELECT 1 FROM agent_messages m JOIN agent_session_heads h ON h.num = m.session_num
     WHERE h.session_id = ? AND m.id = j.value) LIMIT 1`;

/** `NOT_FOUND` for the first message of `replaces` the session does not hold (one statement for all of them). */
function assertStored(
  driver: SqlDriver,
  sessionId: string,
  replaces: readonly { message: { id: string } }[],
): void {
  const ids = JSON.stringify(replaces.map(({ message }) => message.id));
  const [missing] = driver.column<string>(FIRST_MISSING, [ids, sessionId]);
  if (missing !== undefined) {
    throw new SessionError("NOT_FOUND", `Message "${missing}" is not in session "${sessionId}"`);
  }
}

/** Writes a prepared step in one transaction (see the module comment). */
export async function writeSqliteStep(
  store: SqliteBackend,
  { step, writes, usage, check, replaces, replaced: onReplaced, removed }: PreparedStep,
): Promise<void> {
  const { driver } = store;
  const { sessionId } = step;
  const guard = { source: step.source ?? null, owner: step.owner ?? null };
  driver.transaction(() => {
    // A step that replaces or removes appends nothing (store/step.ts); each write is the provider's own. Every
    // message it replaces is looked for first (after its guard: another owner's session is not probed), so a missing
    // one refuses the step before anything is written (a driver that cannot roll back would otherwise keep the
    // replacements before it, or the registry's touch).
    if (replaces.length > 0) {
      if (!driver.get(GUARDED_ROW, [sessionId, ...stepGuardParams(guard)])) throw notFound(sessionId);
      assertStored(driver, sessionId, replaces);
    }
    // Then the registry row: touched (its activity time, and the usage added) only while it is the guard's (its
    // source and owner) and the usage fits, so a missing or another's session, or a total the usage would carry out
    // of range, refuses the step before anything is written — also on a driver that cannot roll back (a `sql` tag
    // without transactionSync) — and one statement both guards and touches it.
    const now = new Date().toISOString();
    touchRegistry(driver, sessionId, guard, usage, now);
    replaces.forEach(({ message, json }, i) => {
      const written = writeMessageRow(
        driver,
        store.changeLog,
        sessionId,
        { message, json, replaces: true },
        replaced(message.id),
        (content, key) => updateRow(driver, sessionId, message, content, key),
      );
      onReplaced(i, { ...written, json });
    });
    if (step.remove && step.remove.length > 0)
      removed(removeRows(store, sessionId, step.remove, step.removeTip));
    let at: string | null | undefined = step.parentId;
    // A chain's next append takes what the one before wrote and looked up (the head and parent, the owner's key),
    // unread: the transaction holds the write lock. Made only when a next append takes it (the last append's child
    // context would cost a read of its skip target for nothing).
    let context: (() => AppendContext) | undefined;
    let sealKey: Uint8Array | null | undefined;
    writes.forEach((write, i) => {
      const message = step.messages[i]!;
      let written: Written<AppendResult>;
      if (!write) written = { result: { inserted: false, message } };
      else {
        const { message: stored, json } = write;
        const known = context?.();
        context = undefined;
        const appended = writeMessageRow(
          driver,
          store.changeLog,
          sessionId,
          { message: stored, json, replaces: false, key: sealKey },
          inserted("append", stored.id, at),
          (content, key) => {
            const row = appendRow(driver, sessionId, stored, {
              parentId: at,
              expectedLeafId: step.guard && at !== undefined ? at : undefined,
              json: content,
              key,
              context: known,
            });
            if (key !== undefined) sealKey = key;
            context = row.child;
            return row;
          },
        );
        const answer = appended.result.inserted ? json : (storedJson(driver, sessionId, stored.id) ?? json);
        written = { ...appended, json: answer };
      }
      check(i, written);
      at = message.id;
    });
    if (step.block) {
      // Recorded as the session's (sql/context-records/) unless the row has a record, and sealed when the owner of
      // the record it keeps has a key (sealed-context.ts), inside the step's transaction.
      const row = driver.get<RecordRow>("SELECT session_id, owner FROM agent_context_blocks WHERE key = ?", [
        step.block.key,
      ]);
      const record = keptRecord(row, { sessionId, owner: null });
      const stored = storedBlock(driver, step.block.key, step.block.content, record);
      driver.run(
        `INSERT INTO agent_context_blocks (key, content, sealed, updated_at, session_id) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET content = excluded.content, sealed = excluded.sealed,
           updated_at = excluded.updated_at, ${KEEP_RECORD}`,
        [step.block.key, stored.content, stored.sealed, now, sessionId],
      );
    }
  });
}

// Touches the step's registry row and adds its usage, guarded (see writeSqliteStep); NOT_FOUND (or the usage's
// refusal) when the row is not the guard's.
function touchRegistry(
  driver: SqlDriver,
  sessionId: string,
  guard: { source: string | null; owner: string | null },
  usage: PreparedStep["usage"],
  now: string,
): void {
  const counters = usage ? `${USAGE_SET}, ` : "";
  const row = driver.get(
    `UPDATE agent_sessions SET ${counters}updated_at = ?, activity = ${NEXT_ACTIVITY}
     WHERE id = ? AND ${STEP_GUARD}${usage ? ` AND ${USAGE_FITS}` : ""} RETURNING id`,
    [
      ...(usage ? usageDeltas(usage) : []),
      now,
      sessionId,
      ...stepGuardParams(guard),
      ...(usage ? usageBounds(usage) : []),
    ],
  );
  if (!row) {
    if (usage) refuseUsage(driver, sessionId, usage, guard);
    throw notFound(sessionId);
  }
}
