/**
 * Postgres's statements of checkpoints (steps.ts has the steps; its tables and its part of the house are in
 * room.ts). Every statement but a page across threads names its session, so on a
 * Citus cluster (the tables sharded by session, owner-data.ts) it is routed to the session's node; a chain read is
 * one recursive query filtered by the session at each step.
 */
import { qualified, statement, type Tables } from "../engines/postgres/tables.js";
import { command, query, type Statement } from "../program.js";
import { storedId, storedIdHex } from "./ids.js";
import { postgresSingleWrites } from "./postgres-single.js";
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

const names = (t: Tables) => ({
  cps: qualified(t, "agent_checkpoints"),
  values: qualified(t, "agent_checkpoint_values"),
  writes: qualified(t, "agent_checkpoint_writes"),
});

const COLUMNS = "session_id, ns, id, parent_id, type, data, metadata_type, metadata, versions, sealed";

const putCheckpointSql = statement(
  (t) => `INSERT INTO ${names(t).cps} (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
    ON CONFLICT (session_id, ns, id) DO UPDATE SET parent_id = EXCLUDED.parent_id, type = EXCLUDED.type,
      data = EXCLUDED.data, metadata_type = EXCLUDED.metadata_type, metadata = EXCLUDED.metadata,
      versions = EXCLUDED.versions, sealed = EXCLUDED.sealed`,
);
const putValueSql = statement(
  (t) => `INSERT INTO ${names(t).values}
      (session_id, ns, channel, version, tag, type, base, prefix, data, depth, chain, sealed)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
    WHERE $7::text IS NULL OR EXISTS (SELECT 1 FROM ${names(t).values}
      WHERE session_id = $1 AND ns = $2 AND channel = $3 AND version = $7 AND tag = $13)
    ON CONFLICT DO NOTHING RETURNING 1 AS put`,
);
const WRITE_COLUMNS = "session_id, ns, checkpoint_id, task_id, idx, channel, type, data, task_path, sealed";
const writeSql = (replace: boolean) =>
  statement(
    (t) => `INSERT INTO ${names(t).writes} (${WRITE_COLUMNS})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ${onWriteConflict(replace)}`,
  );
// The reference form while its value row is there with the tag the writer knows (write-refs.ts).
const refWriteSql = (replace: boolean) =>
  statement(
    (t) => `INSERT INTO ${names(t).writes} (${WRITE_COLUMNS})
    SELECT $1, $2, $3, $4, $5, $6, CASE WHEN r.ok THEN $7 ELSE $8 END, CASE WHEN r.ok THEN $9::bytea ELSE $10::bytea END,
      $11, CASE WHEN r.ok THEN $12::boolean ELSE $13::boolean END
    FROM (SELECT EXISTS (SELECT 1 FROM ${names(t).values}
      WHERE session_id = $14 AND ns = $15 AND channel = $16 AND version = $17 AND tag = $18) AS ok) r
    ${onWriteConflict(replace)}`,
  );
// A write row turned into a reference while it holds what this process stored (write-refs.ts).
const refUpdateSql = statement(
  (t) => `UPDATE ${names(t).writes} SET type = $1, data = $2, sealed = false
    WHERE session_id = $3 AND ns = $4 AND checkpoint_id = $5 AND task_id = $6 AND idx = $7 AND type = $8 AND data = $9
      AND EXISTS (SELECT 1 FROM ${names(t).values}
        WHERE session_id = $10 AND ns = $11 AND channel = $12 AND version = $13 AND tag = $14)`,
);
// An input row turned into a reference while it holds the tag this process knows (value-refs.ts).
const refValueSql = statement(
  (t) => `UPDATE ${names(t).values} SET type = $1, data = $2, sealed = $3
    WHERE session_id = $4 AND ns = $5 AND channel = $6 AND version = $7 AND tag = $8
      AND base IS NOT DISTINCT FROM $9::text AND prefix = $10 AND right(type, 3) <> '|v1'
      AND EXISTS (SELECT 1 FROM ${names(t).values}
        WHERE session_id = $11 AND ns = $12 AND channel = $13 AND version = $14 AND tag = $15)`,
);
const replaceWriteSql = writeSql(true);
const keepWriteSql = writeSql(false);
const replaceRefWriteSql = refWriteSql(true);
const keepRefWriteSql = refWriteSql(false);
const latestSql = statement(
  (t) => `SELECT ${COLUMNS} FROM ${names(t).cps} WHERE session_id = $1 AND ns = $2 ORDER BY id DESC LIMIT 1`,
);
const byIdSql = statement(
  (t) => `SELECT ${COLUMNS} FROM ${names(t).cps} WHERE session_id = $1 AND ns = $2 AND id = $3`,
);
const writesSql = statement(
  (t) => `SELECT checkpoint_id, task_id, idx, channel, type, data, task_path, sealed FROM ${names(t).writes}
    WHERE session_id = $1 AND ns = $2
      AND checkpoint_id = ANY(ARRAY(SELECT decode(h, 'hex') FROM unnest($3::text[]) AS h))`,
);
// The chain of each wanted version down to its full row; every step names the session, so Citus routes it.
const chainSql = statement(
  (t) => `WITH RECURSIVE chain(channel, version, held) AS (
      SELECT w.channel, w.version, w.held FROM unnest($3::text[], $4::text[], $5::text[]) AS w(channel, version, held)
      UNION
      SELECT v.channel, v.base, NULL::text FROM chain c JOIN ${names(t).values} v
        ON v.session_id = $1 AND v.ns = $2 AND v.channel = c.channel AND v.version = c.version
      WHERE v.base IS NOT NULL AND (c.held IS NULL OR v.tag <> c.held)
    )
    SELECT v.channel, v.version, v.tag, v.type, v.base, v.prefix, v.data, v.depth, v.chain, v.sealed
    FROM chain c JOIN ${names(t).values} v
      ON v.session_id = $1 AND v.ns = $2 AND v.channel = c.channel AND v.version = c.version`,
);
const footprintSql = statement((t) => {
  const n = names(t);
  return `SELECT (SELECT count(*)::integer FROM ${n.cps} WHERE session_id = $1) AS n,
    coalesce((SELECT sum(length(data) + length(metadata) + octet_length(versions)) FROM ${n.cps} WHERE session_id = $1), 0)
    + coalesce((SELECT sum(coalesce(length(data), 0)) FROM ${n.values} WHERE session_id = $1), 0)
    + coalesce((SELECT sum(length(data)) FROM ${n.writes} WHERE session_id = $1), 0) AS bytes`;
});

const namespacesSql = statement(
  (t) => `SELECT DISTINCT ns FROM ${names(t).cps} WHERE session_id = $1 ORDER BY ns`,
);

// Postgres stores the sealed flag as a boolean.
const sealedFlag = (sealed: boolean) => sealed;

/** Postgres's statement table of checkpoints for the tables `t`. */
export function postgresCheckpoints(t: Tables): CheckpointStatements {
  return {
    ...postgresSingleWrites(t),
    putCheckpoint: (c, data, metadata) =>
      command(putCheckpointSql(t), checkpointParams(c, data, metadata, sealedFlag)),
    putValue: (sessionId, ns, v, plan, data) =>
      query(putValueSql(t), [...valueParams(sessionId, ns, v, plan, data, sealedFlag), plan.baseTag]),
    putWrite: (sessionId, ns, checkpointId, w, data, replace, ref) =>
      ref
        ? command(
            (replace ? replaceRefWriteSql : keepRefWriteSql)(t),
            refWriteParams(sessionId, ns, checkpointId, w, data, ref, sealedFlag),
          )
        : command(
            (replace ? replaceWriteSql : keepWriteSql)(t),
            writeParams(sessionId, ns, checkpointId, w, data, sealedFlag),
          ),
    refWrite: (sessionId, ns, u) => command(refUpdateSql(t), refUpdateParams(sessionId, ns, u)),
    refValue: (sessionId, ns, r) => command(refValueSql(t), refValueParams(sessionId, ns, r, sealedFlag)),
    checkpoint: (sessionId, ns, id) =>
      id === null ? query(latestSql(t), [sessionId, ns]) : query(byIdSql(t), [sessionId, ns, storedId(id)]),
    page: (q) => pageStatement(t, q),
    idsPerRead: Number.POSITIVE_INFINITY,
    // Ids as hex text: a bytea array's parameter is not one every client serializes.
    writes: (sessionId, ns, ids) => query(writesSql(t), [sessionId, ns, ids.map(storedIdHex)]),
    chain: (sessionId, ns, wanted) =>
      query(chainSql(t), [
        sessionId,
        ns,
        wanted.map((w) => w[0]),
        wanted.map((w) => w[1]),
        wanted.map((w) => w[2]),
      ]),
    footprint: (sessionId) => query(footprintSql(t), [sessionId]),
    namespaces: (sessionId) => query(namespacesSql(t), [sessionId]),
  };
}

// A page's statement: its conditions vary with the query, so it is built per call (not memoized).
function pageStatement(t: Tables, q: Parameters<CheckpointStatements["page"]>[0]): Statement {
  const where: string[] = [];
  const params: unknown[] = [];
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (q.sessionId !== undefined) where.push(`session_id = ${p(q.sessionId)}`);
  else {
    where.push(
      `session_id IN (SELECT id FROM ${t.sessions} WHERE owner IS NOT DISTINCT FROM ${p(q.owner ?? null)}::text)`,
    );
  }
  if (q.ns !== undefined) where.push(`ns = ${p(q.ns)}`);
  if (q.id !== undefined) where.push(`id = ${p(storedId(q.id))}`);
  if (q.before !== undefined) where.push(`id < ${p(storedId(q.before))}`);
  if (q.after !== undefined) {
    where.push(
      `(id, session_id, ns) < (${p(storedId(q.after.id))}, ${p(q.after.sessionId)}, ${p(q.after.ns)})`,
    );
  }
  return query(
    `SELECT ${COLUMNS} FROM ${names(t).cps} WHERE ${where.join(" AND ")}
    ORDER BY id DESC, session_id DESC, ns DESC LIMIT ${p(q.limit)}`,
    params,
  );
}
