// The sessions `agent-session learn` goes through, without those whose facts the store cannot seal (encrypted owners
// whose key the keyring does not answer).
import { hasFactStore } from "../../contract/facts.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import type { Keyring } from "../../store/crypto/keyring.js";
import { CliError } from "../errors.js";
import { requireOwners, requireSession } from "../inspect/sessions.js";
import { holdsOwnerKeys } from "../keyring.js";
import type { OpenedStore } from "../store.js";

/** Sessions of an owner read per page of the registry. */
const PAGE = 500;

/** The sessions to learn (undefined: every registered one), how many, and the encrypted owners' ones left out. */
export interface LearnTargets {
  sessionIds: string[] | undefined;
  total: number;
  leftOut: string[];
}

/**
 * The sessions of `--session`, `--owner` or `--all`. An encrypted owner's facts are sealed with its key
 * (docs/FACTS.md, "Encryption"); without it (no keyring, or one without the owner's key) the store refuses them, so a
 * named one is refused (`DECRYPT_FAILED`) and `--all` leaves them out (listed). A wrong key is found by the learner,
 * which leaves such sessions (its report's `encrypted`).
 */
export async function learnTargets(
  opened: OpenedStore,
  keyring: Keyring | undefined,
  scope: { sessionId?: string | undefined; owner?: string | undefined },
): Promise<LearnTargets> {
  const { store } = opened;
  if (!hasFactStore(store))
    throw new CliError(`the ${store.backend} store keeps no facts: it has no fact store`, "UNSUPPORTED");
  const encrypted = new Map<string, boolean>();
  const isEncrypted = async (owner: string | null | undefined): Promise<boolean> => {
    if (owner === null || owner === undefined || keyring?.key(owner) !== undefined) return false;
    if (!encrypted.has(owner)) encrypted.set(owner, await holdsOwnerKeys(opened, owner));
    return encrypted.get(owner) === true;
  };
  const refuse = (owner: string) =>
    new CliError(
      `owner ${JSON.stringify(owner)} is encrypted, and the keyring has no key for it: its facts cannot be sealed (docs/FACTS.md, Encryption)`,
      "DECRYPT_FAILED",
    );
  if (scope.sessionId !== undefined) {
    const { owner } = await requireSession(store, scope.sessionId);
    if (owner && (await isEncrypted(owner))) throw refuse(owner);
    return { sessionIds: [scope.sessionId], total: 1, leftOut: [] };
  }
  requireOwners(store);
  if (scope.owner !== undefined) {
    if (await isEncrypted(scope.owner)) throw refuse(scope.owner);
    const sessionIds = await ownerSessions(store, scope.owner);
    if (sessionIds.length === 0)
      throw new CliError(`owner ${JSON.stringify(scope.owner)} has no registered sessions`, "NOT_FOUND");
    return { sessionIds, total: sessionIds.length, leftOut: [] };
  }
  // Without an encrypted owner the registry is read as learnFacts reads it; with one, each session is looked at.
  if (!(await holdsOwnerKeys(opened)))
    return { sessionIds: undefined, total: await store.registry.count(), leftOut: [] };
  const sessionIds: string[] = [];
  const leftOut: string[] = [];
  for await (const info of store.registry.scan()) {
    if (await isEncrypted(info.owner)) leftOut.push(info.id);
    else sessionIds.push(info.id);
  }
  return { sessionIds, total: sessionIds.length, leftOut };
}

/**
 * The owner's session ids, a page of the registry's owner index at a time, oldest activity first: the owner's
 * facts are one scope, so the session written to last is learned last and its word supersedes the older ones.
 */
async function ownerSessions(store: RegistryCapableStore, owner: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await store.registry.list({ owner, limit: PAGE, offset });
    ids.push(...page.map((info) => info.id));
    if (page.length < PAGE) return ids.reverse();
  }
}
