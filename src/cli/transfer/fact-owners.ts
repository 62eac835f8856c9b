/**
 * The import check pass's look at whose a fact is (check.ts): an owner's fact may only name sessions registered to
 * that owner, and an encrypted owner's facts only go to a store that holds its key, as the write pass requires
 * (src/facts/import.ts `assertInScope`, the store's `assertWritable`). Checked here so such a file is refused before
 * its sessions are written. A session's owner after the import is the store's registry row when it has one (an
 * import never replaces a row), else the file's; the file's owners are held per session the file brings (as the
 * check already holds its ids), the store's are read once per session, in a cache of at most
 * {@link MAX_CACHED_OWNERS}, and each owner's key is probed once (one read of a fact of its scope).
 */
import type { FactCapableStore } from "../../contract/facts.js";
import type { SessionInfo } from "../../contract/registry.js";
import { hasSessionRegistry } from "../../contract/registry.js";
import { SessionError } from "../../errors.js";
import type { ImportedFact } from "../../store/fact-import.js";
import { CliError } from "../errors.js";

/** The most store-read session owners kept at once (the cache starts over past it). */
export const MAX_CACHED_OWNERS = 10_000;

type Fail = (problem: string) => never;

/** Whose sessions are and which owners' keys the store holds, as a fact's import needs them (see the module). */
export class FactOwnerCheck {
  // The registered sessions the file brings: the owner its record names (null: none).
  private readonly fileOwners = new Map<string, string | null>();
  // Sessions whose registry row the store was asked for: its owner (null: none), or undefined for no row.
  private readonly storeOwners = new Map<string, string | null | undefined>();
  // Owners whose key was probed and found usable.
  private readonly probed = new Set<string>();

  constructor(private readonly store: FactCapableStore) {}

  /** Notes a session record of the file: its registry row (null: not registered). */
  session(id: string, info: SessionInfo | null): void {
    if (info !== null) this.fileOwners.set(id, info.owner ?? null);
  }

  /** Refuses `fact` when a source session of an owner's fact is not registered to that owner after the import. */
  async registered(fact: ImportedFact, fail: Fail): Promise<void> {
    const owner = fact.scope.owner;
    if (owner === null) return;
    for (const sessionId of new Set(fact.sources.map((s) => s.sessionId))) {
      const found = await this.ownerOf(sessionId);
      if (found === owner) continue;
      const whose =
        found === undefined
          ? "which is not registered"
          : found === null
            ? "which has no owner"
            : `which is owner ${JSON.stringify(found)}'s`;
      fail(
        `fact ${JSON.stringify(fact.id)} of owner ${JSON.stringify(owner)} names session ${JSON.stringify(sessionId)}, ${whose}: an owner's facts name only its sessions`,
      );
    }
  }

  /**
   * Refuses `fact` (read at `line`, `DECRYPT_FAILED`) when its owner (a session fact's: its session's) has
   * encrypted content whose key the store lacks or has wrong.
   */
  async writable(fact: ImportedFact, line: number): Promise<void> {
    const { owner, sessionId } = fact.scope;
    const sealer = owner ?? (await this.ownerOf(sessionId as string));
    if (sealer === null || sealer === undefined || this.probed.has(sealer)) return;
    try {
      // A read of the owner's scope is refused as its write would be where the key is missing or wrong.
      await this.store.facts.get({ owner: sealer }, fact.id);
    } catch (error) {
      if (!(error instanceof SessionError) || error.code !== "DECRYPT_FAILED") throw error;
      const of = owner === null ? `session ${JSON.stringify(sessionId)} of ` : "";
      throw new CliError(
        `line ${line}: fact ${JSON.stringify(fact.id)} of ${of}owner ${JSON.stringify(sealer)} cannot be stored: ${error.message}`,
        "DECRYPT_FAILED",
      );
    }
    this.probed.add(sealer);
  }

  // The session's owner after the import: the store's registry row's, else the file's; undefined when neither
  // registers it.
  private async ownerOf(sessionId: string): Promise<string | null | undefined> {
    const stored = await this.storedOwner(sessionId);
    return stored !== undefined ? stored : this.fileOwners.get(sessionId);
  }

  private async storedOwner(sessionId: string): Promise<string | null | undefined> {
    if (!hasSessionRegistry(this.store)) return undefined;
    if (this.storeOwners.has(sessionId)) return this.storeOwners.get(sessionId);
    const info = await this.store.registry.get(sessionId);
    const owner = info === null ? undefined : (info.owner ?? null);
    if (this.storeOwners.size >= MAX_CACHED_OWNERS) this.storeOwners.clear();
    this.storeOwners.set(sessionId, owner);
    return owner;
  }
}
