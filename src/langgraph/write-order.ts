/**
 * The order a checkpoint's put keeps with its parent's pending writes (docs/LANGGRAPH.md, "Storage"). LangGraph calls
 * a task's `putWrites` and then, without waiting for it, the next checkpoint's `put` (pregel/loop.js); the put turns
 * a write of its parent this process stored in full into a reference to one of its values (sql/checkpoints/
 * write-refs.ts), but only a write already stored when the put starts. On one server the write's one statement was
 * nearly always first; on a Citus cluster, where each is a transaction of several statements, the put often started
 * first and the write stayed whole. So a put waits for the writes of its parent that were called before it (and
 * only those: a write called after it may wait for the put's own values, ref-memory.ts); no statement more.
 */

/** The `putWrites` calls in flight, by thread, namespace and checkpoint. */
export class WritesInFlight {
  private readonly at = new Map<string, Set<Promise<unknown>>>();

  /** `done` (a `putWrites` of checkpoint `checkpointId`) tracked until it settles; `done` itself, for the caller. */
  track<T>(threadId: string, ns: string, checkpointId: string, done: Promise<T>): Promise<T> {
    const key = JSON.stringify([threadId, ns, checkpointId]);
    const set = this.at.get(key) ?? new Set();
    this.at.set(key, set);
    set.add(done);
    const drop = () => {
      set.delete(done);
      if (set.size === 0 && this.at.get(key) === set) this.at.delete(key);
    };
    done.then(drop, drop);
    return done;
  }

  /**
   * Settles once every `putWrites` of checkpoint `checkpointId` in flight now has (failed ones included: their
   * caller hears the failure); undefined when there is none, so a put with nothing to wait for awaits nothing.
   */
  settled(threadId: string, ns: string, checkpointId: string | undefined): Promise<unknown> | undefined {
    if (checkpointId === undefined) return undefined;
    const set = this.at.get(JSON.stringify([threadId, ns, checkpointId]));
    if (!set || set.size === 0) return undefined;
    return Promise.allSettled([...set]);
  }
}
