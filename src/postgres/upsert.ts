import type { SessionMessage } from "../contract/message.js";
import type { Executor } from "../sql/engines/postgres/client.js";
import type { Tables } from "../sql/engines/postgres/tables.js";
import type { StoredForm } from "../sql/sealing/postgres-stored-form.js";
import type { RowWritten } from "../store/written.js";
import { appendRow } from "./append.js";
import { rewrite, updateRow } from "./rewrite.js";
import { lockHeadSql } from "./writes.js";

/**
 * Inserts the message, or replaces the stored one with its id (its place in the tree stays). The replace runs
 * under the session's head lock; when the id is not stored the message is appended, and an append that finds the
 * id stored after all (a concurrent insert) replaces it, so the caller's content always ends up stored.
 */
export async function upsertRow(
  executor: Executor,
  t: Tables,
  sessionId: string,
  message: SessionMessage,
  parentId: string | null | undefined,
  form: StoredForm,
): Promise<RowWritten<{ inserted: boolean; updated: boolean }, string>> {
  const replaced = await executor.transaction(async (query) => {
    const [head] = await query<{ num: string }>(lockHeadSql(t), [sessionId]);
    return head ? rewrite(query, t, head.num, sessionId, message, form) : undefined;
  });
  if (replaced) return { result: { inserted: false, ...replaced.result }, seq: replaced.seq };
  const appended = await appendRow(executor, t, sessionId, message, { parentId, form });
  if (appended.result.inserted) return { result: { inserted: true, updated: false }, seq: appended.seq };
  const updated = await updateRow(executor, t, sessionId, message, form);
  return { result: { inserted: false, ...updated.result }, seq: updated.seq };
}
