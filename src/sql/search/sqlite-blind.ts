/**
 * The keyed blind index on SQLite (search/blind-tokens.ts): which owners' tokens a write and a search use. A
 * sealed message is indexed under its owner's blind tokens; a search kept to a session, an owner or a set of
 * sessions hashes its terms for each owner in scope that has a key (a wrong key is `DECRYPT_FAILED` here, before
 * anything is read). A store-wide search without an owner or sessions hashes for no owner: it would need every
 * owner's key, one set of terms each, however many owners the store holds; it finds text in clear only.
 */
import { SessionError } from "../../errors.js";
import { emitWarning } from "../../runtime/warn.js";
import { assertBlindOwners, type BlindTokens, blindTokensOf } from "../../search/blind-tokens.js";
import type { SearchPlan } from "../../search/options.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

/** The blind tokens a sealed message of `sessionId` is indexed with (its owner's key, checked), or null (none). */
export function blindOfSession(driver: SqlDriver, sessionId: string): BlindTokens | null {
  const key = driver.keys?.keyFor(sessionId, false) ?? null;
  return key === null ? null : blindTokensOf(key);
}

/** The session id of the head `sessionNum`, or undefined. */
export function sessionIdOf(driver: SqlDriver, sessionNum: number): string | undefined {
  return driver.get<{ id: string }>("SELECT session_id AS id FROM agent_session_heads WHERE num = ?", [
    sessionNum,
  ])?.id;
}

/** A session whose sealed rows a batch indexes: its id (to open them) and its owner's blind tokens. */
export interface SealedSession {
  sessionId: string;
  blind: BlindTokens;
}

/**
 * The sealed sessions of one index batch, each looked up once (its id, its owner's key checked): a batch is mostly
 * one session's rows.
 */
export class BatchBlinds {
  private readonly sessions = new Map<number, SealedSession | null>();

  constructor(private readonly driver: SqlDriver) {}

  /**
   * The session `sessionNum` of `owner` when this connection can index its sealed rows, else null: no owner, a
   * keyring without its key, or a key that is no longer the owner's (a process left on the key before a rotation).
   * The batch runs inside another session's write, which one owner's key must not fail, so such rows are left out
   * as a keyless connection leaves them, and a wrong key is reported.
   */
  of(sessionNum: number, owner: string | null): SealedSession | null {
    let found = this.sessions.get(sessionNum);
    if (found === undefined) {
      found = this.look(sessionNum, owner);
      this.sessions.set(sessionNum, found);
    }
    return found;
  }

  private look(sessionNum: number, owner: string | null): SealedSession | null {
    const driver = this.driver;
    if (owner === null || driver.keys?.keyring.key(owner) === undefined) return null;
    const sessionId = sessionIdOf(driver, sessionNum);
    if (sessionId === undefined) return null;
    try {
      const blind = blindOfSession(driver, sessionId);
      return blind === null ? null : { sessionId, blind };
    } catch (error) {
      if (!(error instanceof SessionError) || error.code !== "DECRYPT_FAILED") throw error;
      emitWarning(
        error,
        "AgentSessionSearchWarning",
        "an encrypted message was left out of the search index",
      );
      return null;
    }
  }
}

/**
 * The blind tokens of every owner with a key in the search's scope: the session's owner, the owner asked for, or
 * the owners of the sessions named; none for a store-wide search (see above).
 */
export function searchBlinds(
  driver: SqlDriver,
  plan: Pick<SearchPlan, "sessionId" | "sessionIds" | "owner">,
): BlindTokens[] {
  if (!driver.keys) return [];
  const keys = driver.keys;
  let owners = 0;
  // An owner's keys are checked by the owner itself: no session of it is read (the registry's owner index is not
  // ranged over), and a store without its key refuses even where no row of it is stored yet.
  if (plan.owner !== undefined && plan.sessionId === undefined) {
    const ownerKeys = keys.ownerSearchKeys(plan.owner);
    assertBlindOwners(ownerKeys.length > 0 ? 1 : 0);
    return ownerKeys.map(blindTokensOf);
  }
  // A rotation under way adds the key it moves from: rows not yet re-sealed are indexed under its tokens.
  const blinds = sessionsByOwner(driver, plan).flatMap((sessionId) => {
    const searchKeys = keys.searchKeys(sessionId);
    if (searchKeys.length > 0) owners++;
    return searchKeys.map(blindTokensOf);
  });
  assertBlindOwners(owners);
  return blinds;
}

// One session of each owner in scope (the key check goes by session): the session searched, or one of each owner
// among the sessions named.
function sessionsByOwner(
  driver: SqlDriver,
  { sessionId, sessionIds }: Pick<SearchPlan, "sessionId" | "sessionIds">,
): string[] {
  if (sessionId !== undefined) return [sessionId];
  if (sessionIds === undefined) return [];
  return driver.column<string>(
    `SELECT MIN(s.id) FROM json_each(?) j JOIN agent_sessions s ON s.id = j.value
     WHERE s.owner IS NOT NULL GROUP BY s.owner`,
    [JSON.stringify([...sessionIds])],
  );
}
