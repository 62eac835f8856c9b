/**
 * Where an auto-wired block is stored: under `<label>_<sessionId>` in the store's block table, or under the label
 * alone for the unnamed session. That is the reference's scheme, kept so that its data reads as ours; it is not
 * one-to-one, so a key can name two blocks ("notes" of session "team_a" and "notes_team" of session "a" are both
 * `notes_team_a`) and two sessions would read, overwrite and delete one stored value. Such a key goes to the longer
 * label: the session that would reach it through a shorter one ("notes" of "team_a") does not own it.
 */
import { SessionError } from "../errors.js";
import type { WritableContextProvider } from "./types.js";

/** The stored key of block `label` of session `sessionId` (the label alone for the unnamed session ""). */
export function blockKey(label: string, sessionId: string): string {
  return sessionId === "" ? label : `${label}_${sessionId}`;
}

/**
 * The block key of the memory-tool directory of an owner or a session (`_` keys are the library's own rows, which no
 * block label reaches): named here so an erasure of the owner or the session removes it too.
 */
export function memoryDirectoryKey(scope: "owner" | "session", id: string): string {
  return `_memories_${scope}_${id}`;
}

/**
 * Why block `label` of session `sessionId` does not own its key among the blocks `labels`: the key is that of a
 * longer label's block in another session; undefined when it owns it.
 */
export function foreignBlockKey(
  labels: readonly string[],
  label: string,
  sessionId: string,
): string | undefined {
  const key = blockKey(label, sessionId);
  for (const other of labels) {
    if (other.length <= label.length) continue;
    // The unnamed session stores a block under its label; another session's id is never empty.
    const otherSession =
      key === other
        ? ""
        : key.length > other.length + 1 && key.startsWith(`${other}_`)
          ? key.slice(other.length + 1)
          : null;
    if (otherSession === null) continue;
    return (
      `Block "${label}" of session ${JSON.stringify(sessionId)} would be stored under "${key}", which is the key ` +
      `of block "${other}" of session ${JSON.stringify(otherSession)}: the two would share one stored value. ` +
      "Use another session id, rename one of the blocks or give it a provider"
    );
  }
  return undefined;
}

/** The refusal of a block whose key is another session's: `INVALID_ARGUMENT`, its issue at the block's label. */
export function foreignKeyError(reason: string): SessionError {
  return new SessionError("INVALID_ARGUMENT", reason, { issues: [{ path: "label", rule: "conflict" }] });
}

/**
 * Refuses (`INVALID_ARGUMENT`) a session id under which one of the blocks `labels` would not own its key.
 * Hand-written: a clash between the session id and the blocks configured, not the shape of either.
 */
export function assertOwnBlockKeys(labels: readonly string[], sessionId: string): void {
  for (const label of labels) {
    const reason = foreignBlockKey(labels, label, sessionId);
    if (reason !== undefined) throw foreignKeyError(reason);
  }
}

/**
 * The stand-in for a block whose key is another session's (a session stored before such ids were refused): it
 * reads nothing of the other session's and refuses every write, so the rest of the session still works.
 */
export function foreignKeyProvider(reason: string): WritableContextProvider {
  return {
    get: async () => null,
    set: async () => {
      throw foreignKeyError(reason);
    },
  };
}

/**
 * Which session a block key belongs to. Sessions store blocks as `<label>_<sessionId>`, and both parts may
 * contain `_`, so the longest suffix that names an existing session wins (`memory_a_b` belongs to session `a_b`
 * when it exists, else to `b`). Null when no suffix names a session (a shared block, or the unnamed session's).
 */
export async function blockOwner(
  key: string,
  exists: (id: string) => Promise<boolean>,
): Promise<{ sessionId: string; label: string } | null> {
  for (let at = key.indexOf("_", 1); at >= 0; at = key.indexOf("_", at + 1)) {
    const sessionId = key.slice(at + 1);
    if (sessionId.length > 0 && (await exists(sessionId))) return { sessionId, label: key.slice(0, at) };
  }
  return null;
}
