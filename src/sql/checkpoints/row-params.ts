/**
 * The parameters of checkpoints' three row writes, in their columns' order, written once for both engines'
 * statement tables (sqlite.ts, postgres.ts), ids in their stored form (ids.ts): each engine passes how it stores the sealed flag (SQLite 0/1, Postgres a
 * boolean) and adds what its statement's text needs after them.
 */
import type { StoredCheckpoint, StoredWrite } from "../../contract/checkpoints.js";
import type { ValuePlan } from "./delta.js";
import { storedId, storedIdOrNull } from "./ids.js";
import type { RefUpdate } from "./ref-memory.js";
import type { StoredBytes } from "./sealing.js";
import type { ValueRefRow } from "./stored-rows.js";
import { packVersions } from "./versions.js";
import type { RefForm } from "./write-refs.js";
import { NO_BYTES } from "./write-refs.js";

/** How an engine stores a row's sealed flag. */
export type SealedFlag = (sealed: boolean) => unknown;

/** A checkpoint row's values: session_id, ns, id, parent_id, type, data, metadata_type, metadata, versions, sealed. */
export function checkpointParams(
  c: StoredCheckpoint,
  data: StoredBytes,
  metadata: StoredBytes,
  flag: SealedFlag,
): unknown[] {
  return [
    c.sessionId,
    c.ns,
    storedId(c.id),
    storedIdOrNull(c.parentId),
    c.type,
    data.data,
    c.metadataType,
    metadata.data,
    packVersions(c.versions),
    flag(data.sealed),
  ];
}

/**
 * A channel value row's values: session_id, ns, channel, version, tag, type, base, prefix, data, depth, chain,
 * sealed.
 */
export function valueParams(
  sessionId: string,
  ns: string,
  v: { channel: string; version: string; type: string; tag: string },
  plan: ValuePlan,
  data: StoredBytes | null,
  flag: SealedFlag,
): unknown[] {
  return [
    sessionId,
    ns,
    v.channel,
    v.version,
    v.tag,
    v.type,
    plan.base,
    plan.prefix,
    data?.data ?? null,
    plan.depth,
    plan.chain,
    flag(data?.sealed ?? false),
  ];
}

/** A pending write's values: session_id, ns, checkpoint_id, task_id, idx, channel, type, data, task_path, sealed. */
export function writeParams(
  sessionId: string,
  ns: string,
  checkpointId: string,
  w: StoredWrite,
  data: StoredBytes,
  flag: SealedFlag,
): unknown[] {
  return [
    sessionId,
    ns,
    storedId(checkpointId),
    storedId(w.taskId),
    w.idx,
    w.channel,
    w.type,
    data.data,
    w.taskPath,
    flag(data.sealed),
  ];
}

/**
 * A pending write's values when it may go as a reference (write-refs.ts): session_id, ns, checkpoint_id, task_id,
 * idx, channel, then type, data and sealed each as (reference form, full form) around task_path, then the value row
 * the reference needs: session_id, ns, channel, version, tag.
 */
export function refWriteParams(
  sessionId: string,
  ns: string,
  checkpointId: string,
  w: StoredWrite,
  data: StoredBytes,
  ref: RefForm,
  flag: SealedFlag,
): unknown[] {
  const full = writeParams(sessionId, ns, checkpointId, w, data, flag);
  const [type, bytes, taskPath, sealed] = full.slice(6);
  return [
    ...full.slice(0, 6),
    ref.type,
    type,
    ref.data.data,
    bytes,
    taskPath,
    flag(ref.data.sealed),
    sealed,
    sessionId,
    ns,
    ref.channel,
    ref.version,
    ref.tag,
  ];
}

/**
 * An input row turned into a reference (value-refs.ts): its new type, data and sealed flag, its key and the tag,
 * base and prefix it must still hold, then the row it names: session_id, ns, channel, version, tag.
 */
export function refValueParams(sessionId: string, ns: string, r: ValueRefRow, flag: SealedFlag): unknown[] {
  return [
    r.type,
    r.data.data,
    flag(r.data.sealed),
    sessionId,
    ns,
    r.channel,
    r.version,
    r.tag,
    r.base,
    r.prefix,
    sessionId,
    ns,
    r.ref.channel,
    r.ref.version,
    r.ref.tag,
  ];
}

/** A pending write's conflict clause, as both engines' statements end: the stored row kept, or replaced. */
export const onWriteConflict = (replace: boolean) =>
  `ON CONFLICT (session_id, ns, checkpoint_id, task_id, idx) DO ${
    replace
      ? "UPDATE SET channel = excluded.channel, type = excluded.type, data = excluded.data, task_path = excluded.task_path, sealed = excluded.sealed"
      : "NOTHING"
  }`;

/**
 * A write row turned into a reference (write-refs.ts): its new type and (empty) data, its key, the stored type and
 * data it must still hold, then the value row the reference needs: session_id, ns, channel, version, tag.
 */
export function refUpdateParams(sessionId: string, ns: string, u: RefUpdate): unknown[] {
  return [
    u.type,
    NO_BYTES,
    sessionId,
    ns,
    storedId(u.checkpointId),
    storedId(u.taskId),
    u.idx,
    u.storedType,
    u.storedData,
    sessionId,
    ns,
    u.channel,
    u.version,
    u.tag,
  ];
}
