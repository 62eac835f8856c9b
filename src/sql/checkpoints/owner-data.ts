/**
 * The checkpoints' tables, declared once for both engines (the room, room.ts, hands them to each engine): tied
 * to the session (a LangGraph thread), sealed for a keyed owner (sealing.ts `CHECKPOINT`), deleted with the
 * session, and on Citus sharded by session with the messages (the engine's `plain` places them so).
 */
import type { OwnerDataTable } from "../../store/owner-data.js";
import type { TransferField } from "../../store/transfer/owner-fields.js";
import type { OwnerDataMakers } from "../room.js";
import { CHECKPOINT } from "./sealing.js";

/** The three tables, made by the engine's `plain` (its purge work and placement). */
export function checkpointTables({ plain, withSession }: OwnerDataMakers): OwnerDataTable[] {
  return [
    plain(
      "agent_checkpoints",
      "a LangGraph thread's checkpoints: the serialized checkpoint and its metadata",
      "session",
      "sealed",
      withSession,
      {
        session_id: "id",
        ns: "meta",
        id: "id",
        parent_id: "id",
        type: "meta",
        data: "content",
        metadata_type: "meta",
        metadata: "content",
        versions: "meta",
      },
      { data: CHECKPOINT.name, metadata: CHECKPOINT.name },
    ),
    plain(
      "agent_checkpoint_values",
      "a thread's channel values, one row per version (full, or a delta of an earlier version)",
      "session",
      "sealed",
      withSession,
      {
        session_id: "id",
        ns: "meta",
        channel: "meta",
        version: "meta",
        tag: "meta",
        type: "meta",
        base: "meta",
        data: "content",
      },
      { data: CHECKPOINT.name },
    ),
    plain(
      "agent_checkpoint_writes",
      "a thread's pending writes (a task's outputs before the next checkpoint)",
      "session",
      "sealed",
      withSession,
      {
        session_id: "id",
        ns: "meta",
        checkpoint_id: "id",
        task_id: "id",
        channel: "meta",
        type: "meta",
        data: "content",
        task_path: "meta",
      },
      { data: CHECKPOINT.name },
    ),
  ];
}

/** A thread is a session: its export carries its checkpoints (store/transfer/checkpoints.ts), values and writes. */
export const CHECKPOINT_TRANSFER_FIELDS: Readonly<Record<string, TransferField>> = {
  "agent_checkpoints.data": { carried: "checkpoint.data" },
  "agent_checkpoints.metadata": { carried: "checkpoint.metadata" },
  "agent_checkpoint_values.data": { carried: "checkpoint.values" },
  "agent_checkpoint_writes.data": { carried: "checkpoint.writes" },
};
