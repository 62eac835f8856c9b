/**
 * Removal of vectors whose message is gone, on SQLite: the orphans a delete left before the delete trigger existed
 * (swept by backfill and after a reported delete), and sqlite-vec's rows of deleted vector rows (drained by a
 * connection with the extension). Both run in bounded batches, one transaction each.
 */
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { int, SWEEP_BATCH } from "./sqlite-schema.js";

/**
 * Deletes the vector rows (of session `num`, or of every session) whose message is gone or now another session's
 * (SQLite may give a deleted seq to a new message); on sqlite-vec their tombstones then take the index rows.
 */
export function sweepOrphans(driver: SqlDriver, num?: number): void {
  // A cursor over seq: each batch reads on from the last, so the sweep reads the table once, not once per batch.
  for (let after = 0; ; ) {
    const orphans = driver.column<number>(
      `SELECT v.seq FROM agent_message_vectors v LEFT JOIN agent_messages m ON m.seq = v.seq
       WHERE v.seq > ? AND (m.seq IS NULL OR m.session_num <> v.session_num)${num === undefined ? "" : " AND v.session_num = ?"}
       ORDER BY v.seq LIMIT ?`,
      num === undefined ? [after, SWEEP_BATCH] : [after, num, SWEEP_BATCH],
    );
    if (orphans.length === 0) return;
    driver.transaction(() => {
      for (const seq of orphans) driver.run("DELETE FROM agent_message_vectors WHERE seq = ?", [seq]);
    });
    if (orphans.length < SWEEP_BATCH) return;
    after = orphans[orphans.length - 1] as number;
  }
}

/**
 * Removes from sqlite-vec's table the vectors whose rows were deleted (agent_message_vectors_gone, filled by a
 * trigger in whichever connection deleted them); the connection must have sqlite-vec loaded.
 */
export function drainGone(driver: SqlDriver): void {
  for (;;) {
    const seqs = driver.column<number>("SELECT seq FROM agent_message_vectors_gone ORDER BY seq LIMIT ?", [
      SWEEP_BATCH,
    ]);
    if (seqs.length === 0) return;
    driver.transaction(() => {
      for (const seq of seqs) {
        // A seq SQLite gave again to a new message may have its vector stored since: that one stays.
        if (!driver.get("SELECT 1 AS present FROM agent_message_vectors WHERE seq = ?", [seq]))
          driver.run("DELETE FROM agent_message_vectors_vec WHERE rowid = ?", [int(seq)]);
        driver.run("DELETE FROM agent_message_vectors_gone WHERE seq = ?", [seq]);
      }
    });
    if (seqs.length < SWEEP_BATCH) return;
  }
}
