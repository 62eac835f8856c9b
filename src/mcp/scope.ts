/**
 * Which sessions the MCP tools may reach. Scoped to an owner, a session is reachable only when its registry row
 * names that owner: another owner's session and an unregistered one are "not found" alike, with the same words as
 * an unknown id, so a client cannot tell them apart. Unscoped, every session of the store is reachable.
 */
import { blockKey, blockOwner } from "../context/block-keys.js";
import { hasContextStorage, hasRecords } from "../contract/context.js";
import { hasSessionRegistry, type SessionInfo } from "../contract/registry.js";
import type { SessionStore } from "../contract/store.js";
import { hasTransfer } from "../contract/transfer.js";
import { SessionError } from "../errors.js";
import { ownedBy } from "../store/owner.js";

/** Looks sessions up within the server's owner scope. */
export class SessionScope {
  constructor(
    private readonly store: SessionStore,
    /** The owner every reachable session belongs to; undefined: every session. */
    readonly owner: string | undefined,
  ) {}

  /** The registry row of a session, when the store keeps one. */
  private async info(sessionId: string): Promise<SessionInfo | null> {
    return hasSessionRegistry(this.store) ? this.store.registry.get(sessionId) : null;
  }

  /** Whether `sessionId` is a session within the scope (registered, or holding a message when unscoped). */
  async reachable(sessionId: string): Promise<boolean> {
    const info = await this.info(sessionId);
    if (this.owner !== undefined) return ownedBy(info, this.owner);
    return info !== null || (await this.store.session(sessionId).getLatestLeaf()) !== null;
  }

  /** `NOT_FOUND` unless {@link reachable}. */
  async require(sessionId: string): Promise<void> {
    if (!(await this.reachable(sessionId))) {
      throw new SessionError("NOT_FOUND", `session ${JSON.stringify(sessionId)} not found`);
    }
  }

  /**
   * The stored key of block `label` of `sessionId` when the store records it as that session's (contract/context.ts
   * ContextRecord), else null: a key naming the session is not its block unless recorded so (`profile_bob` of an
   * owner "bob" is never session "bob"'s). A store that keeps no records falls back to the suffix rule unscoped
   * (the key belongs to the longest suffix naming an existing session) and reaches nothing within an owner scope.
   */
  async blockKey(sessionId: string, label: string): Promise<string | null> {
    const key = blockKey(label, sessionId);
    return (await this.blockKeys(sessionId)).includes(key) ? key : null;
  }

  /** Whether {@link blockKey} reads records (else the suffix rule, or nothing within an owner scope). */
  get recorded(): boolean {
    return hasContextStorage(this.store) && hasRecords(this.store.blocks);
  }

  /**
   * The keys of the blocks of `sessionId` (after {@link require}): those recorded for it; on a store without
   * records, unscoped, the keys whose longest session suffix is it, and within an owner scope none.
   */
  async blockKeys(sessionId: string): Promise<string[]> {
    await this.require(sessionId);
    if (!hasContextStorage(this.store)) return [];
    const blocks = this.store.blocks;
    if (hasRecords(blocks)) return blocks.recordedKeys({ sessionId });
    if (this.owner !== undefined || !hasTransfer(this.store)) return [];
    const keys: string[] = [];
    // The block rows come first in the export stream; the first entry ends them.
    for await (const row of this.store.transfer.exportRows()) {
      if (row.kind !== "block") break;
      if (!row.key.endsWith(`_${sessionId}`)) continue;
      if ((await blockOwner(row.key, (id) => this.exists(id)))?.sessionId === sessionId) keys.push(row.key);
    }
    return keys;
  }

  /** Whether any session (of any owner) is stored or registered under `sessionId`: key ownership is store-wide. */
  private async exists(sessionId: string): Promise<boolean> {
    return (
      (await this.info(sessionId)) !== null || (await this.store.session(sessionId).getLatestLeaf()) !== null
    );
  }
}
