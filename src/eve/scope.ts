/**
 * Where an eve memory operation reads and writes: its owner (the authenticated principal, or the app's `owner`),
 * that owner's view of the manager, and the session of the operation's eve session in its memory scope, registered
 * for the owner on first use (another owner's session of that id is `NOT_FOUND`, never its data).
 */
import type { RegistryCapableStore, SessionInfo } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import type { OwnerView } from "../manager/owner-view.js";
import { MAX_SEARCH_SESSIONS } from "../search/options.js";
import type { Session } from "../session/session.js";
import { parseOwner } from "../store/owner.js";
import { SOURCE_PREFIX, scopeTag, sessionIdOf, sourceOf } from "./ids.js";
import type { MemorySettings, OwnerContext } from "./options.js";

/** Principal types eve gives no memory (as its `byPrincipal` scope): no owner for them. */
const NO_MEMORY = new Set(["anonymous", "runtime"]);

/** One operation's place: the owner's view, the scope key and the eve session. */
export interface Place {
  readonly owner: string;
  readonly view: OwnerView;
  /** The manager's store (for what the view does not offer: adding an owner's fact). */
  readonly store: RegistryCapableStore;
  readonly scopeKey: string;
  readonly eveSessionId: string;
  readonly slot: string;
}

/** The owner of an operation, or null (no principal, an anonymous one, or the app's `owner` answered none). */
export function ownerOf(settings: MemorySettings, context: OwnerContext): string | null {
  let owner: string | null | undefined;
  if (settings.owner !== undefined) owner = settings.owner(context);
  else {
    const current = context.session.auth.current;
    owner = current === null || NO_MEMORY.has(current.principalType) ? null : current.principalId;
  }
  return owner === null || owner === undefined ? null : parseOwner(owner);
}

/** The operation's place, or null when it has no owner. */
export function placeOf(settings: MemorySettings, context: OwnerContext): Place | null {
  const owner = ownerOf(settings, context);
  if (owner === null) return null;
  return {
    owner,
    view: settings.manager.forOwner(owner),
    store: settings.manager.store,
    scopeKey: context.memory.scope.key,
    eveSessionId: context.session.id,
    slot: context.memory.slot,
  };
}

/** The id of the place's session (registered or not). */
export const sessionIdAt = (place: Place): string => sessionIdOf(place.scopeKey, place.eveSessionId);

/** The place's session, registered for the owner when new; `NOT_FOUND` when the id is another owner's. */
export async function openSession(place: Place): Promise<Session> {
  const id = sessionIdAt(place);
  if ((await place.view.get(id)) === null) {
    try {
      await place.view.create(`eve ${place.slot}`, {
        id,
        source: sourceOf(place.scopeKey, place.eveSessionId),
      });
    } catch (error) {
      // Registered meanwhile (a capture and a tool at once), or another owner's: getSession decides.
      if (!(error instanceof SessionError && error.code === "CONFLICT")) throw error;
    }
  }
  return place.view.getSession(id);
}

/** Registry rows read per page when the scope's sessions are listed. */
const PAGE = 200;

/**
 * The owner's sessions recall searches, newest activity first: the ones of the place's memory scope (`"scope"`),
 * at most the search's limit of sessions; undefined for `"owner"` (every session of the owner, by the search's
 * own owner scope). An owner with more sessions than that is read a page at a time up to 10 pages.
 */
export async function recallSessions(place: Place, across: "scope" | "owner"): Promise<string[] | undefined> {
  if (across === "owner") return undefined;
  const prefix = `${SOURCE_PREFIX}${scopeTag(place.scopeKey)}:`;
  const ids: string[] = [];
  for (let page = 0; page < 10 && ids.length < MAX_SEARCH_SESSIONS; page++) {
    const rows: SessionInfo[] = await place.view.list({ limit: PAGE, offset: page * PAGE });
    for (const row of rows) if (row.source?.startsWith(prefix)) ids.push(row.id);
    if (rows.length < PAGE) break;
  }
  return ids.slice(0, MAX_SEARCH_SESSIONS);
}
