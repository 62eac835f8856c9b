/**
 * Vectors whose message is gone, on Postgres: the reference that makes a delete take them (added to a vector table
 * made before it), and the sweep of what deletes left before that.
 */
import type { Executor } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import type { VectorTables } from "./postgres-schema.js";

/** Vector rows removed per statement when orphans are swept (bounded lock time). */
const SWEEP_BATCH = 1_000;

/**
 * Gives a vector table made before its rows referenced their messages the reference (ON DELETE CASCADE), NOT VALID:
 * the orphans such a store holds do not fail it and no row is read to add it ({@link sweepOrphans} removes them).
 */
export async function linkMessages(executor: Executor, v: VectorTables): Promise<void> {
  // Any foreign key of the table is this one (its name is cut to 63 bytes under a long prefix, so it is not looked up by name).
  const missing = async () => {
    const [row] = await executor.query<{ missing: boolean }>(
      "SELECT NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'f') AS missing",
      [v.vectors],
    );
    return row?.missing !== false;
  };
  if (!(await missing())) return;
  const key = v.layout.sessionKey("seq");
  try {
    await executor.query(
      `ALTER TABLE ${v.vectors} ADD FOREIGN KEY (${key}) REFERENCES ${v.messages} (${key}) ON DELETE CASCADE NOT VALID`,
    );
  } catch (error) {
    // Another process added it meanwhile: the reference this one wanted is there.
    if (await missing()) throw error;
  }
}

/**
 * Deletes the vector rows (of one session, or of every session) whose message is gone, in batches along seq, one
 * statement each: a store with many orphans is not locked for one long delete.
 */
export async function sweepOrphans(
  executor: Executor,
  t: Tables,
  v: VectorTables,
  sessionId?: string,
): Promise<void> {
  const scope =
    sessionId === undefined
      ? ""
      : v.layout.rowsCarrySession
        ? " AND v.session_id = $2"
        : ` AND v.session_num = (SELECT num FROM ${t.heads} WHERE session_id = $2)`;
  for (let after = 0; ; ) {
    const gone = await executor.query<{ seq: string | number }>(
      `DELETE FROM ${v.vectors} WHERE seq IN (
         SELECT v.seq FROM ${v.vectors} v WHERE v.seq > $1${scope} AND NOT EXISTS (
           SELECT 1 FROM ${t.messages} m WHERE ${v.joinOn} AND m.session_num = v.session_num)
         ORDER BY v.seq LIMIT ${SWEEP_BATCH})
       RETURNING seq`,
      sessionId === undefined ? [after] : [after, sessionId],
    );
    if (gone.length < SWEEP_BATCH) return;
    after = Math.max(...gone.map((row) => Number(row.seq)));
  }
}
