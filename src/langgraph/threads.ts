/**
 * Which threads a run may read and write (saver.ts): a thread is a session of the registry, registered to the
 * run's owner on its first checkpoint, and another owner's thread is refused. A store whose writes check an owner
 * themselves (contract/checkpoints.ts `checksOwner`: one Postgres server's write statement, SQLite's write
 * transaction) lets a thread already
 * checked skip the registry read: its writes carry the owner expected, and one refused (the thread deleted, or
 * created again for another owner, by another process) reads the registry again, as a first write does.
 */
import type { CheckpointStore, OwnerExpectation } from "../contract/checkpoints.js";
import type { SessionRegistry } from "../contract/registry.js";
import { SessionError } from "../errors.js";

// Threads whose owner is remembered (the oldest forgotten first).
const REMEMBERED = 1024;

/** A saver's owner checks of threads. */
export class ThreadOwners {
  // Thread → the owner a write of this saver found it registered to, for a store that checks it on each write.
  private readonly owners = new Map<string, string | null>();

  constructor(
    private readonly registry: SessionRegistry,
    private readonly checkpoints: CheckpointStore,
    private readonly ownerKey: string | undefined,
  ) {}

  /** Whether `owner` may read the thread: it is the thread's owner (none for both counts); unregistered: no. */
  async readable(threadId: string, owner: string | null): Promise<boolean> {
    const info = await this.registry.get(threadId);
    return info !== null && (info.owner ?? null) === owner;
  }

  /** Runs `write` of the thread for `owner`, registering the thread first if it is not; another owner's: CONFLICT. */
  async write(
    threadId: string,
    owner: string | null,
    write: (expect: OwnerExpectation | undefined) => Promise<void>,
  ): Promise<void> {
    // A thread is remembered only after a write whose store checks owners, so the store is open by then: a Citus
    // store knows its layout (and whether it checks) only once opened, after the registry's first read below.
    if (this.owners.has(threadId) && this.owners.get(threadId) === owner) {
      try {
        return await write({ owner });
      } catch (error) {
        if (!(error instanceof SessionError && error.code === "CONFLICT")) throw error;
        this.owners.delete(threadId); // changed under this saver: the registry decides again
      }
    }
    await this.writable(threadId, owner);
    const checks = this.checkpoints.checksOwner === true;
    await write(checks ? { owner } : undefined);
    if (checks) this.remember(threadId, owner);
  }

  /** Forgets a thread (deleted by this saver). */
  forget(threadId: string): void {
    this.owners.delete(threadId);
  }

  // The thread registered to `owner` on its first checkpoint; another owner's thread is refused.
  private async writable(threadId: string, owner: string | null): Promise<void> {
    let info = await this.registry.get(threadId);
    if (!info) {
      try {
        info = await this.registry.create({ id: threadId, name: "", owner, source: "langgraph" });
      } catch (error) {
        // Another process registered it first: its owner decides.
        if (!(error instanceof SessionError && error.code === "CONFLICT")) throw error;
        info = await this.registry.get(threadId);
      }
    }
    if ((info?.owner ?? null) !== owner) {
      throw new SessionError(
        "CONFLICT",
        `Thread "${threadId}" is not the run's owner's (configurable.${this.ownerKey})`,
      );
    }
  }

  private remember(threadId: string, owner: string | null): void {
    this.owners.delete(threadId);
    this.owners.set(threadId, owner);
    if (this.owners.size > REMEMBERED) this.owners.delete(this.owners.keys().next().value as string);
  }
}
