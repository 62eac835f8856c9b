/**
 * LangGraph's checkpointer over any agent-session store (docs/LANGGRAPH.md): a thread is a session of the store's
 * registry, its owner the run config's `configurable[ownerKey]`, and its checkpoints, channel values and pending
 * writes the store's checkpoint tables (sql/checkpoints/), so erasure, purge, sealing, transfer placement and
 * retention reach them. What LangGraph's own savers refuse, this refuses with the same plain `Error`s; the rest is
 * a `SessionError` with a code.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  copyCheckpoint,
  type PendingWrite,
  type SerializerProtocol,
  WRITES_IDX_MAP,
} from "@langchain/langgraph-checkpoint";
import type { CheckpointStore, StoredWrite } from "../contract/checkpoints.js";
import { hasCheckpoints } from "../contract/checkpoints.js";
import type { SessionProvider } from "../contract/provider.js";
import type { SessionRegistry } from "../contract/registry.js";
import { hasSessionRegistry } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { assertSessionId } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { parseOwner } from "../store/owner.js";
import { listOptionsOf, saverOptions, type ThreadKey, threadKey } from "./config.js";
import { MessageRecall } from "./recall.js";
import { ThreadOwners } from "./threads.js";
import { type TupleReader, tupleOf } from "./tuples.js";
import { WritesInFlight } from "./write-order.js";

/** Options of {@link AgentSessionSaver}. */
export interface AgentSessionSaverOptions {
  /**
   * The `configurable` key that names a run's owner (e.g. `"user_id"`): a thread is registered to it, and a config
   * naming another owner (or none, for an owned thread) neither reads nor writes it. Absent: threads have no owner.
   */
  ownerKey?: string | undefined;
  /** LangGraph's serializer (default: its JSON-plus serializer). */
  serde?: SerializerProtocol | undefined;
  /**
   * The channel whose LangChain messages become the thread's session history, searchable (default `"messages"`,
   * `MessagesAnnotation`'s); `false`: none.
   */
  messagesChannel?: string | false | undefined;
}

/** A store the saver can keep threads in: its registry, its checkpoint tables and its sessions (recall). */
export interface CheckpointerStore {
  registry: SessionRegistry;
  checkpoints: CheckpointStore;
  session(sessionId: string): SessionProvider;
}

// At most this many checkpoints read per page of a filtered list (a filter is applied to opened metadata).
const FILTER_PAGE = 100;

/** LangGraph's `BaseCheckpointSaver` over an agent-session store. */
export class AgentSessionSaver extends BaseCheckpointSaver {
  private readonly ownerKey: string | undefined;
  private readonly reader: TupleReader;
  private readonly channel: string | undefined;
  private readonly recall: MessageRecall | undefined;
  private readonly threads: ThreadOwners;
  private readonly writing = new WritesInFlight();

  constructor(
    private readonly store: CheckpointerStore,
    options: AgentSessionSaverOptions = {},
  ) {
    super(options?.serde);
    if (!hasCheckpoints(store as never) || !hasSessionRegistry(store as never)) {
      throw new SessionError(
        "UNSUPPORTED",
        "AgentSessionSaver needs a store with a registry and checkpoints",
      );
    }
    parseInput(saverOptions, options ?? {}, { path: "options" });
    this.ownerKey = options?.ownerKey;
    this.threads = new ThreadOwners(store.registry, store.checkpoints, this.ownerKey);
    this.reader = {
      serde: this.serde,
      parent: (read) => store.checkpoints.get(read.sessionId, read.ns, read.parentId),
      firstVersion: () => this.getNextVersion(undefined),
    };
    const channel = options?.messagesChannel ?? "messages";
    this.channel = channel === false ? undefined : channel;
    this.recall = channel === false ? undefined : new MessageRecall(store, (id, at) => this.listAt(id, at));
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const key = threadKey(config);
    if (key.threadId === undefined) return undefined;
    if (!(await this.threads.readable(key.threadId, this.ownerOf(config)))) return undefined;
    const read = await this.store.checkpoints.get(key.threadId, key.ns, key.checkpointId ?? null);
    if (!read) return undefined;
    const tuple = await tupleOf(this.reader, read);
    // The list the graph resumes from: the next put's parent, known without reading it again.
    if (key.ns === "" && this.channel !== undefined)
      this.recall?.saw(key.threadId, read.id, tuple.checkpoint.channel_values[this.channel]);
    return tuple;
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const key = threadKey(config, true);
    const owner = this.ownerOf(config);
    if (key.threadId !== undefined && !(await this.threads.readable(key.threadId, owner))) return;
    const { before, filter, limit: asked } = listOptionsOf(options);
    let left = asked;
    let after: { sessionId: string; ns: string; id: string } | undefined;
    while (left > 0) {
      // Without a filter a page is what is asked for; with one, pages until enough metadata matched.
      const limit = filter ? FILTER_PAGE : Math.min(left, FILTER_PAGE);
      const page = await this.store.checkpoints.page({
        sessionId: key.threadId,
        owner,
        ns: key.ns,
        id: key.checkpointId,
        before,
        after,
        limit,
      });
      for (const read of page) {
        const tuple = await tupleOf(this.reader, read);
        if (
          filter &&
          !Object.entries(filter).every(
            ([k, v]) => (tuple.metadata as Record<string, unknown> | undefined)?.[k] === v,
          )
        )
          continue;
        yield tuple;
        if (--left <= 0) return;
      }
      const last = page[page.length - 1];
      if (!last || page.length < limit) return;
      after = { sessionId: last.sessionId, ns: last.ns, id: last.id };
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error(`Missing "configurable" field in "config" param`);
    const key = threadKey(config);
    if (key.threadId === undefined) {
      throw new Error(
        'Failed to put checkpoint. The passed RunnableConfig is missing a required "thread_id" field in its "configurable" property.',
      );
    }
    assertSessionId(checkpoint?.id, "checkpoint.id");
    // The parent's writes called before this put are stored first, so the put can refer them (write-order.ts).
    const parentWrites = this.writing.settled(key.threadId, key.ns, key.checkpointId);
    // The values live in the values table, one row per channel version; the checkpoint keeps the rest.
    // and the channel versions are a column of their own (clear, so a read finds the values without the bytes).
    const { channel_values, channel_versions, ...rest } = copyCheckpoint(checkpoint);
    // A channel emptied at this version (LangGraph's savers store an "empty" row for it) gets no row: a read finds
    // no value under the version the checkpoint names, which is what an empty row reads as (tuples.ts).
    const values = await Promise.all(
      Object.entries(newVersions ?? {})
        .filter(([channel]) => channel in channel_values)
        .map(async ([channel, version]) => {
          const [type, data] = await this.serde.dumpsTyped(channel_values[channel]);
          return { channel, version: String(version), type, data };
        }),
    );
    const [[type, data], [metadataType, metadataBytes]] = await Promise.all([
      this.serde.dumpsTyped(rest),
      this.serde.dumpsTyped(metadata),
    ]);
    const stored = {
      sessionId: key.threadId,
      ns: key.ns,
      id: checkpoint.id,
      parentId: key.checkpointId ?? null,
      type,
      data,
      metadataType,
      metadata: metadataBytes,
      versions: channel_versions ?? {},
    };
    if (parentWrites) await parentWrites;
    await this.threads.write(key.threadId, this.ownerOf(config), (expect) =>
      this.store.checkpoints.put(stored, values, expect),
    );
    // Recall: the root graph's new messages into the thread's session, right after the checkpoint (recall.ts).
    if (this.recall && this.channel !== undefined && key.ns === "") {
      const changed = newVersions !== undefined && this.channel in newVersions;
      const list = changed ? (channel_values[this.channel] ?? []) : undefined;
      if (list === undefined || Array.isArray(list))
        await this.recall.afterPut(key.threadId, key.checkpointId, checkpoint.id, list);
    }
    return { configurable: { thread_id: key.threadId, checkpoint_ns: key.ns, checkpoint_id: checkpoint.id } };
  }

  putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    let key: ThreadKey & { ns: string };
    try {
      key = threadKey(config);
    } catch (error) {
      return Promise.reject(error);
    }
    const done = this.storeWrites(config, key, writes, taskId, taskPath);
    // Tracked from the call on, before any await, so a put called after it waits for it (write-order.ts).
    if (key.threadId === undefined || key.checkpointId === undefined) return done;
    return this.writing.track(key.threadId, key.ns, key.checkpointId, done);
  }

  private async storeWrites(
    config: RunnableConfig,
    key: ThreadKey & { ns: string },
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    if (key.threadId === undefined) {
      throw new Error(
        'Failed to put writes. The passed RunnableConfig is missing a required "thread_id" field in its "configurable" property.',
      );
    }
    if (key.checkpointId === undefined) {
      throw new Error(
        `Failed to put writes. The passed RunnableConfig is missing a required "checkpoint_id" field in its "configurable" property.`,
      );
    }
    assertSessionId(taskId, "taskId");
    const stored: StoredWrite[] = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, data] = await this.serde.dumpsTyped(value);
        return { taskId, idx: WRITES_IDX_MAP[channel] ?? idx, channel, type, data, taskPath: taskPath ?? "" };
      }),
    );
    // The special channels (errors, interrupts) replace their write; the others keep the first one stored.
    const replace = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const { threadId, ns, checkpointId } = key;
    await this.threads.write(threadId, this.ownerOf(config), (expect) =>
      this.store.checkpoints.putWrites(threadId, ns, checkpointId, stored, replace, expect),
    );
  }

  /** Deletes the thread as the store erases a session: its checkpoints, registry row and all (purge then scrubs). */
  async deleteThread(threadId: string): Promise<void> {
    assertSessionId(threadId, "threadId");
    this.threads.forget(threadId);
    const registry = this.store.registry;
    if (registry.erase) await registry.erase(threadId);
    else await registry.delete(threadId);
  }

  /**
   * The next version of a channel: the next whole number plus a random fraction, so the versions a fork makes from
   * an earlier checkpoint never equal those of the branch it left (a version's value is stored once per thread).
   */
  override getNextVersion(current: number | undefined): number {
    const whole = typeof current === "number" && Number.isFinite(current) ? Math.floor(current) : 0;
    // Nine random digits: short in every checkpoint that names the version, and a collision one in a billion.
    const fraction = String(1 + Math.floor(Math.random() * 999_999_999)).padStart(9, "0");
    return Number(`${whole + 1}.${fraction}`);
  }

  // The messages list of a root checkpoint (recall's parent when it does not remember it).
  private async listAt(threadId: string, checkpointId: string): Promise<unknown[] | undefined> {
    const read = await this.store.checkpoints.get(threadId, "", checkpointId);
    const stored = read?.values.find((v) => v.channel === this.channel);
    if (!stored || stored.data === null || stored.type === "empty") return undefined;
    const list = await this.serde.loadsTyped(stored.type, stored.data);
    return Array.isArray(list) ? list : undefined;
  }

  // The run's owner: `configurable[ownerKey]` (null: none named, or no owner key).
  private ownerOf(config: RunnableConfig): string | null {
    if (this.ownerKey === undefined) return null;
    const value = config.configurable?.[this.ownerKey];
    return value === undefined || value === null ? null : parseOwner(value, `configurable.${this.ownerKey}`);
  }
}

export type { ThreadKey };
