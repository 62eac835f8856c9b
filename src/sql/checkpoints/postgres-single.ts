/**
 * Postgres's checkpoint writes as one statement each (steps.ts `putAll`, `putWritesAll`; postgres-store.ts runs
 * them): a warm `put` or `putWrites` is one round trip, its guard spliced in as CTEs (`gv.go`), with no transaction
 * around it. A put inserts its values and its checkpoint row only when no delta lost its base (`lost`: the base row
 * is gone, or another process wrote it again under a new tag), as the statements one by one would have written
 * that value in full: the caller then writes again with every value full.
 */

import type { StoredWrite } from "../../contract/checkpoints.js";
import { qualified, type Tables } from "../engines/postgres/tables.js";
import { prepared, type Statement } from "../program.js";
import { storedId, storedIdOrNull } from "./ids.js";
import { onWriteConflict } from "./row-params.js";
import type { StoredBytes } from "./sealing.js";
import type { CheckpointStatements, StatementGuard } from "./steps.js";
import { packVersions } from "./versions.js";
import type { RefForm } from "./write-refs.js";

// Parameters numbered as they are pushed.
function numbered(): { params: unknown[]; p: (value: unknown, cast: string) => string } {
  const params: unknown[] = [];
  return {
    params,
    p: (value, cast) => {
      params.push(value);
      return `$${params.length}::${cast}`;
    },
  };
}

const WRITE_COLUMNS = "session_id, ns, checkpoint_id, task_id, idx, channel, type, data, task_path, sealed";

/** The one-statement writes of checkpoints for the tables `t`. */
export function postgresSingleWrites(
  t: Tables,
): Required<Pick<CheckpointStatements, "putAll" | "putWritesAll">> {
  const cps = qualified(t, "agent_checkpoints");
  const values = qualified(t, "agent_checkpoint_values");
  const writes = qualified(t, "agent_checkpoint_writes");
  const finish = (body: string, params: unknown[], guard: StatementGuard, answer: string): Statement => {
    const g = guard(params.length + 1);
    return prepared(`WITH ${g.ctes}\n${body}\nSELECT gv.keyed, gv.registered${answer} FROM gv`, [
      ...params,
      ...g.params,
    ]);
  };
  return {
    putAll: (c, data, metadata, rows, refs, inputs, guard) => {
      const { params, p } = numbered();
      const session = p(c.sessionId, "text");
      const ns = p(c.ns, "text");
      const ctes: string[] = [];
      if (rows.length > 0) {
        const tuples = rows.map(
          (r) =>
            `(${[
              p(r.meta.channel, "text"),
              p(r.meta.version, "text"),
              p(r.meta.tag, "text"),
              p(r.meta.type, "text"),
              p(r.plan.base, "text"),
              p(r.plan.prefix, "integer"),
              p(r.data?.data ?? null, "bytea"),
              p(r.plan.depth, "integer"),
              p(r.plan.chain, "bigint"),
              p(r.data?.sealed ?? false, "boolean"),
              p(r.plan.baseTag, "text"),
            ].join(", ")})`,
        );
        // A look-up of one value row by its whole key for each input row (LIMIT keeps it one: an EXISTS here is
        // planned over every value row of the session, a cost growing with the thread).
        const at = (alias: string, version: string, tag = "") =>
          `LEFT JOIN LATERAL (SELECT true AS found FROM ${values} v WHERE v.session_id = ${session} AND v.ns = ${ns}
          AND v.channel = i.channel AND v.version = ${version}${tag} LIMIT 1) ${alias} ON true`;
        ctes.push(
          `inp(channel, version, tag, type, base, prefix, data, depth, chain, sealed, base_tag) AS (VALUES ${tuples.join(", ")})`,
          // A delta whose base row (with the tag the writer knows) is gone, of a version not stored yet.
          `lost AS (SELECT 1 FROM inp i ${at("b", "i.base", " AND v.tag = i.base_tag")} ${at("s", "i.version")}
            WHERE i.base IS NOT NULL AND b.found IS NULL AND s.found IS NULL)`,
          `vals AS (INSERT INTO ${values} (session_id, ns, channel, version, tag, type, base, prefix, data, depth, chain, sealed)
            SELECT ${session}, ${ns}, i.channel, i.version, i.tag, i.type, i.base, i.prefix, i.data, i.depth, i.chain, i.sealed
            FROM inp i WHERE (SELECT go FROM gv) AND NOT EXISTS (SELECT 1 FROM lost)
            ON CONFLICT DO NOTHING RETURNING channel, version, tag)`,
        );
        if (refs.length > 0) {
          // The parent's writes this put's values hold, turned into references to the value rows it inserted
          // (write-refs.ts), while they hold what this process stored.
          const list = refs.map(
            (u) =>
              `(${[
                p(storedId(u.checkpointId), "bytea"),
                p(storedId(u.taskId), "bytea"),
                p(u.idx, "integer"),
                p(u.storedType, "text"),
                p(u.storedData, "bytea"),
                p(u.type, "text"),
                p(u.channel, "text"),
                p(u.version, "text"),
                p(u.tag, "text"),
              ].join(", ")})`,
          );
          ctes.push(
            `wref AS (UPDATE ${writes} w SET type = u.type, data = ''::bytea, sealed = false
              FROM (VALUES ${list.join(", ")}) AS u(checkpoint_id, task_id, idx, stored_type, stored_data, type, channel,
                version, tag)
              WHERE w.session_id = ${session} AND w.ns = ${ns} AND w.checkpoint_id = u.checkpoint_id
                AND w.task_id = u.task_id AND w.idx = u.idx AND w.type = u.stored_type AND w.data = u.stored_data
                AND EXISTS (SELECT 1 FROM vals v WHERE v.channel = u.channel AND v.version = u.version AND v.tag = u.tag)
              RETURNING 1)`,
          );
        }
        if (inputs.length > 0) {
          // The input rows this put's values hold, turned into references to the value rows it inserted
          // (value-refs.ts), while they hold the tag, base and prefix this process knows and are not references yet.
          const list = inputs.map(
            (r) =>
              `(${[
                p(r.channel, "text"),
                p(r.version, "text"),
                p(r.tag, "text"),
                p(r.base, "text"),
                p(r.prefix, "integer"),
                p(r.type, "text"),
                p(r.data.data, "bytea"),
                p(r.data.sealed, "boolean"),
                p(r.ref.channel, "text"),
                p(r.ref.version, "text"),
                p(r.ref.tag, "text"),
              ].join(", ")})`,
          );
          ctes.push(
            `vref AS (UPDATE ${values} v SET type = u.type, data = u.data, sealed = u.sealed
              FROM (VALUES ${list.join(", ")}) AS u(channel, version, tag, base, prefix, type, data, sealed, ref_channel,
                ref_version, ref_tag)
              WHERE v.session_id = ${session} AND v.ns = ${ns} AND v.channel = u.channel AND v.version = u.version
                AND v.tag = u.tag AND v.base IS NOT DISTINCT FROM u.base AND v.prefix = u.prefix
                AND right(v.type, 3) <> '|v1'
                AND EXISTS (SELECT 1 FROM vals x WHERE x.channel = u.ref_channel AND x.version = u.ref_version
                  AND x.tag = u.ref_tag)
              RETURNING 1)`,
          );
        }
      }
      const whole = rows.length > 0 ? " AND NOT EXISTS (SELECT 1 FROM lost)" : "";
      ctes.push(
        `cp AS (INSERT INTO ${cps} (session_id, ns, id, parent_id, type, data, metadata_type, metadata, versions, sealed)
          SELECT ${session}, ${ns}, ${p(storedId(c.id), "bytea")}, ${p(storedIdOrNull(c.parentId), "bytea")}, ${p(c.type, "text")},
            ${p(data.data, "bytea")}, ${p(c.metadataType, "text")}, ${p(metadata.data, "bytea")},
            ${p(packVersions(c.versions), "text")}, ${p(data.sealed, "boolean")}
          WHERE (SELECT go FROM gv)${whole}
          ON CONFLICT (session_id, ns, id) DO UPDATE SET parent_id = EXCLUDED.parent_id, type = EXCLUDED.type,
            data = EXCLUDED.data, metadata_type = EXCLUDED.metadata_type, metadata = EXCLUDED.metadata,
            versions = EXCLUDED.versions, sealed = EXCLUDED.sealed
          RETURNING 1)`,
      );
      const lost = rows.length > 0 ? ", (SELECT count(*) FROM lost)::integer AS lost" : ", 0 AS lost";
      return finish(`${ctes.join(",\n")}`, params, guard, lost);
    },
    putWritesAll: (sessionId, ns, checkpointId, list, replace, guard) => {
      const { params, p } = numbered();
      const session = p(sessionId, "text");
      const space = p(ns, "text");
      const checkpoint = p(storedId(checkpointId), "bytea");
      const tuples = list.map(
        ({ w, data, ref }: { w: StoredWrite; data: StoredBytes; ref?: RefForm | undefined }) =>
          `(${[
            p(storedId(w.taskId), "bytea"),
            p(w.idx, "integer"),
            p(w.channel, "text"),
            p(w.type, "text"),
            p(data.data, "bytea"),
            p(w.taskPath, "text"),
            p(data.sealed, "boolean"),
            p(ref?.channel ?? null, "text"),
            p(ref?.version ?? null, "text"),
            p(ref?.tag ?? null, "text"),
            p(ref?.type ?? null, "text"),
            p(ref?.data.data ?? null, "bytea"),
            p(ref?.data.sealed ?? null, "boolean"),
          ].join(", ")})`,
      );
      // A write with a reference form (write-refs.ts) takes it while its value row is there with the writer's tag.
      const pick = (column: string) => `CASE WHEN r.ok THEN w.ref_${column} ELSE w.${column} END`;
      const body = `ins AS (INSERT INTO ${writes} (${WRITE_COLUMNS})
        SELECT ${session}, ${space}, ${checkpoint}, w.task_id, w.idx, w.channel, ${pick("type")}, ${pick("data")},
          w.task_path, ${pick("sealed")}
        FROM (VALUES ${tuples.join(", ")})
          AS w(task_id, idx, channel, type, data, task_path, sealed, ref_channel, ref_version, ref_tag, ref_type,
            ref_data, ref_sealed)
        -- A look-up of the value row by its whole key for each write (LIMIT keeps it one: a join or an EXISTS
        -- here is planned over every value row of the session).
        LEFT JOIN LATERAL (SELECT true AS ok FROM ${values} v WHERE v.session_id = ${session} AND v.ns = ${space}
          AND v.channel = w.ref_channel AND v.version = w.ref_version AND v.tag = w.ref_tag LIMIT 1) f ON true
        CROSS JOIN LATERAL (SELECT f.ok IS NOT NULL AS ok) r
        WHERE (SELECT go FROM gv)
        ${onWriteConflict(replace)}
        RETURNING 1)`;
      return finish(body, params, guard, "");
    },
  };
}
