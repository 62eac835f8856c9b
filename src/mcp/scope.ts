/**
 * Which sessions the MCP tools may reach. Scoped to an owner, a session is reachable only when its registry row
 * names that owner: another owner's session and an unregistered one are "not found" alike, with the same words as
 * an unknown id, so a client cannot tell them apart. Unscoped, every session of the store is reachable.
 */
import { blockKey, blockOwner } from "../context/block-keys.js";
import { hasSessionRegistry, type SessionInfo } from "../contract/registry.js";
import type { SessionStore } from "../contract/store.js";
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
   * The stored key of block `label` of `sessionId`, or null when that key is another session's. Keys are
   * `<label>_<session>` and both parts may hold `_`, so `notes_team` of session `a` and `notes` of session
   * `team_a` share `notes_team_a`: the key belongs to the longest suffix that names an existing session (the rule
   * the CLI's `blocks` and `export` read keys by), and a client naming a shorter one reaches nothing of the other's.
   * A label without `_` cannot collide (its key's only suffix after a `_` is the session id itself).
   */
  async blockKey(sessionId: string, label: string): Promise<string | null> {
    await this.require(sessionId);
    const key = blockKey(label, sessionId);
    const owner = await blockOwner(key, (id) => this.exists(id));
    return owner?.sessionId === sessionId ? key : null;
  }

  /** Whether any session (of any owner) is stored or registered under `sessionId`: key ownership is store-wide. */
  private async exists(sessionId: string): Promise<boolean> {
    return (
      (await this.info(sessionId)) !== null || (await this.store.session(sessionId).getLatestLeaf()) !== null
    );
  }
}
