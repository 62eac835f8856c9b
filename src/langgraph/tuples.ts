/**
 * A stored checkpoint read back as LangGraph's tuple (saver.ts): its values loaded with the serializer, its pending
 * writes in `writesSortKey` order, and a checkpoint of format 1–3 given its parent's pending sends, as LangGraph's
 * own savers do.
 */
import {
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  maxChannelVersion,
  type SerializerProtocol,
  TASKS,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import type { CheckpointRead, StoredWrite } from "../contract/checkpoints.js";

/** What a tuple needs besides the row: the serializer, a parent's read, and the version a sends channel gets. */
export interface TupleReader {
  serde: SerializerProtocol;
  parent(read: CheckpointRead): Promise<CheckpointRead | null>;
  firstVersion(): number;
}

/** The tuple of a stored checkpoint. */
export async function tupleOf(r: TupleReader, read: CheckpointRead): Promise<CheckpointTuple> {
  const base = (await r.serde.loadsTyped(read.type, read.data)) as Omit<
    Checkpoint,
    "channel_values" | "channel_versions"
  >;
  const channel_values: Record<string, unknown> = {};
  for (const v of read.values) {
    if (v.data !== null && v.type !== "empty")
      channel_values[v.channel] = await r.serde.loadsTyped(v.type, v.data);
  }
  const checkpoint: Checkpoint = {
    ...base,
    channel_values,
    channel_versions: { ...read.versions },
    versions_seen: base.versions_seen ?? {},
  };
  if (checkpoint.v < 4 && read.parentId !== null) await migrateSends(r, checkpoint, read);
  const config = {
    configurable: { thread_id: read.sessionId, checkpoint_ns: read.ns, checkpoint_id: read.id },
  };
  return {
    config,
    checkpoint,
    metadata: (await r.serde.loadsTyped(read.metadataType, read.metadata)) as CheckpointMetadata,
    ...(read.parentId === null
      ? {}
      : { parentConfig: { configurable: { ...config.configurable, checkpoint_id: read.parentId } } }),
    pendingWrites: await ordered(r.serde, read.writes),
  };
}

/** Writes in `writesSortKey` order (task path, task id, idx), loaded. */
export async function ordered(
  serde: SerializerProtocol,
  writes: readonly StoredWrite[],
): Promise<CheckpointPendingWrite[]> {
  const sorted = [...writes].sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.taskPath, a.taskId, a.idx),
      writesSortKey(b.taskPath, b.taskId, b.idx),
    ),
  );
  return Promise.all(
    sorted.map(
      async (w) => [w.taskId, w.channel, await serde.loadsTyped(w.type, w.data)] as CheckpointPendingWrite,
    ),
  );
}

// A checkpoint of format 1–3 took its pending sends from its parent's TASKS writes.
async function migrateSends(r: TupleReader, checkpoint: Checkpoint, read: CheckpointRead): Promise<void> {
  const parent = await r.parent(read);
  const sends = (await ordered(r.serde, parent?.writes.filter((w) => w.channel === TASKS) ?? [])).map(
    (w) => w[2],
  );
  checkpoint.channel_values[TASKS] = sends;
  const versions = Object.values(checkpoint.channel_versions);
  checkpoint.channel_versions[TASKS] =
    versions.length > 0 ? maxChannelVersion(...versions) : r.firstVersion();
}
