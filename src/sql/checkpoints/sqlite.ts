/**
 * SQLite's statements of checkpoints (steps.ts has the steps; its tables and its part of the house are in room.ts).
 * A chain read is one recursive query; the page's owner filter reads the
 * registry's owner column (a thread is a session).
 */
import { command, query } from "../program.js";
import { storedId } from "./ids.js";
import {
  checkpointParams,
  onWriteConflict,
  refUpdateParams,
  refValueParams,
  refWriteParams,
  valueParams,
  writeParams,
} from "./row-params.js";
import type { CheckpointStatements } from "./steps.js";

const COLUMNS = "session_id, ns, id, parent_id, type, data, metadata_type, metadata, versions, sealed";

const flag = (sealed: boolean) => (sealed ? 1 : 0);

const WRITE_COLUMNS = "session_id, ns, checkpoint_id, task_id, idx, channel, type, data, task_path, sealed";

/** SQLite's statement table of checkpoints. */
export const sqliteCheckpoints: CheckpointStatements = {
  putCheckpoint: (c, data, metadata) =>
    command(
      `INSERT INTO agent_checkpoints (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (session_id, ns, id) DO UPDATE SET parent_id = excluded.parent_id, type = excluded.type,
        data = excluded.data, metadata_type = excluded.metadata_type, metadata = excluded.metadata,
        versions = excluded.versions, sealed = excluded.sealed`,
      checkpointParams(c, data, metadata, flag),
    ),
  putValue: (sessionId, ns, v, plan, data) =>
    query(
      `INSERT INTO agent_checkpoint_values
        (session_id, ns, channel, version, tag, type, base, prefix, data, depth, chain, sealed)
      SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
      WHERE ? IS NULL OR EXISTS (SELECT 1 FROM agent_checkpoint_values
        WHERE session_id = ? AND ns = ? AND channel = ? AND version = ? AND tag = ?)
      ON CONFLICT DO NOTHING RETURNING 1 AS put`,
      [
        ...valueParams(sessionId, ns, v, plan, data, flag),
        plan.base,
        sessionId,
        ns,
        v.channel,
        plan.base,
        plan.baseTag,
      ],
    ),
  putWrite: (sessionId, ns, checkpointId, w, data, replace, ref) =>
    ref
      ? command(
          // The reference form while its value row is there with the tag the writer knows (write-refs.ts).
          `INSERT INTO agent_checkpoint_writes (${WRITE_COLUMNS})
          SELECT ?, ?, ?, ?, ?, ?, CASE WHEN r.ok THEN ? ELSE ? END, CASE WHEN r.ok THEN ? ELSE ? END, ?,
            CASE WHEN r.ok THEN ? ELSE ? END
          FROM (SELECT EXISTS (SELECT 1 FROM agent_checkpoint_values
            WHERE session_id = ? AND ns = ? AND channel = ? AND version = ? AND tag = ?) AS ok) r
          WHERE true ${onWriteConflict(replace)}`,
          refWriteParams(sessionId, ns, checkpointId, w, data, ref, flag),
        )
      : command(
          `INSERT INTO agent_checkpoint_writes (${WRITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ${onWriteConflict(replace)}`,
          writeParams(sessionId, ns, checkpointId, w, data, flag),
        ),
  refWrite: (sessionId, ns, u) =>
    command(
      `UPDATE agent_checkpoint_writes SET type = ?, data = ?, sealed = 0
      WHERE session_id = ? AND ns = ? AND checkpoint_id = ? AND task_id = ? AND idx = ? AND type = ? AND data = ?
        AND EXISTS (SELECT 1 FROM agent_checkpoint_values
          WHERE session_id = ? AND ns = ? AND channel = ? AND version = ? AND tag = ?)`,
      refUpdateParams(sessionId, ns, u),
    ),
  refValue: (sessionId, ns, r) =>
    command(
      `UPDATE agent_checkpoint_values SET type = ?, data = ?, sealed = ?
      WHERE session_id = ? AND ns = ? AND channel = ? AND version = ? AND tag = ? AND base IS ? AND prefix = ?
        AND substr(type, -3) <> '|v1' AND EXISTS (SELECT 1 FROM agent_checkpoint_values
          WHERE session_id = ? AND ns = ? AND channel = ? AND version = ? AND tag = ?)`,
      refValueParams(sessionId, ns, r, flag),
    ),
  checkpoint: (sessionId, ns, id) =>
    id === null
      ? query(
          `SELECT ${COLUMNS} FROM agent_checkpoints WHERE session_id = ? AND ns = ? ORDER BY id DESC LIMIT 1`,
          [sessionId, ns],
        )
      : query(`SELECT ${COLUMNS} FROM agent_checkpoints WHERE session_id = ? AND ns = ? AND id = ?`, [
          sessionId,
          ns,
          storedId(id),
        ]),
  page: (q) => {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.sessionId !== undefined) {
      where.push("session_id = ?");
      params.push(q.sessionId);
    } else {
      where.push("session_id IN (SELECT id FROM agent_sessions WHERE owner IS ?)");
      params.push(q.owner ?? null);
    }
    if (q.ns !== undefined) {
      where.push("ns = ?");
      params.push(q.ns);
    }
    if (q.id !== undefined) {
      where.push("id = ?");
      params.push(storedId(q.id));
    }
    if (q.before !== undefined) {
      where.push("id < ?");
      params.push(storedId(q.before));
    }
    if (q.after !== undefined) {
      where.push("(id, session_id, ns) < (?, ?, ?)");
      params.push(storedId(q.after.id), q.after.sessionId, q.after.ns);
    }
    params.push(q.limit);
    return query(
      `SELECT ${COLUMNS} FROM agent_checkpoints WHERE ${where.join(" AND ")}
      ORDER BY id DESC, session_id DESC, ns DESC LIMIT ?`,
      params,
    );
  },
  idsPerRead: 90,
  // Stored ids are bytes, which JSON cannot carry: a placeholder each (a page's ids, a few hundred at most).
  writes: (sessionId, ns, ids) =>
    query(
      `SELECT checkpoint_id, task_id, idx, channel, type, data, task_path, sealed FROM agent_checkpoint_writes
      WHERE session_id = ? AND ns = ? AND checkpoint_id IN (${ids.map(() => "?").join(", ") || "NULL"})`,
      [sessionId, ns, ...ids.map(storedId)],
    ),
  // CROSS JOIN keeps the chain outside: each step is one primary-key look-up, not a scan of the thread's values.
  chain: (sessionId, ns, wanted) =>
    query(
      `WITH RECURSIVE chain(channel, version, held) AS (
        SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]')
        FROM json_each(?) j
        UNION
        SELECT v.channel, v.base, NULL FROM chain c CROSS JOIN agent_checkpoint_values v
          ON v.session_id = ? AND v.ns = ? AND v.channel = c.channel AND v.version = c.version
        WHERE v.base IS NOT NULL AND (c.held IS NULL OR v.tag <> c.held)
      )
      SELECT v.channel, v.version, v.tag, v.type, v.base, v.prefix, v.data, v.depth, v.chain, v.sealed
      FROM chain c CROSS JOIN agent_checkpoint_values v
        ON v.session_id = ? AND v.ns = ? AND v.channel = c.channel AND v.version = c.version`,
      [JSON.stringify(wanted), sessionId, ns, sessionId, ns],
    ),
  namespaces: (sessionId) =>
    query("SELECT DISTINCT ns FROM agent_checkpoints WHERE session_id = ? ORDER BY ns", [sessionId]),
  footprint: (sessionId) =>
    query(
      `SELECT (SELECT count(*) FROM agent_checkpoints WHERE session_id = ?) AS n,
        coalesce((SELECT sum(length(data) + length(metadata) + length(versions)) FROM agent_checkpoints WHERE session_id = ?), 0)
        + coalesce((SELECT sum(coalesce(length(data), 0)) FROM agent_checkpoint_values WHERE session_id = ?), 0)
        + coalesce((SELECT sum(length(data)) FROM agent_checkpoint_writes WHERE session_id = ?), 0) AS bytes`,
      [sessionId, sessionId, sessionId, sessionId],
    ),
};
