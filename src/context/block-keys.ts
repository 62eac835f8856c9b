/**
 * Where an auto-wired block is stored: under `<label>_<sessionId>` in the store's block table, or under the label
 * alone for the unnamed session. That is the reference's scheme, kept so that its data reads as ours; it is not
 * one-to-one, so a key can name two blocks ("notes" of session "team_a" and "notes_team" of session "a" are both
 * `notes_team_a`) and two sessions would read, overwrite and delete one stored value.
 */
import { SessionError } from "../errors.js";

/** The stored key of block `label` of session `sessionId` (the label alone for the unnamed session ""). */
export function blockKey(label: string, sessionId: string): string {
  return sessionId === "" ? label : `${label}_${sessionId}`;
}

/**
 * Refuses (`INVALID_ARGUMENT`) a session whose block key is also the key of another of `labels` in another session.
 * Such a key goes to the longer label (`notes_team_a` is "notes_team" of session "a"): the session that would
 * reach it through a shorter label ("notes" of "team_a") is the one refused, so a label pair such as "memory" and
 * "memory_user" stays usable for every session id but those it would collide with ("user_…").
 */
export function assertOwnBlockKeys(labels: readonly string[], sessionId: string): void {
  for (const label of labels) {
    const key = blockKey(label, sessionId);
    for (const other of labels) {
      if (other.length <= label.length) continue;
      const otherSession =
        key === other ? "" : key.startsWith(`${other}_`) ? key.slice(other.length + 1) : null;
      if (otherSession === null) continue;
      throw new SessionError(
        "INVALID_ARGUMENT",
        `Block "${label}" of session ${JSON.stringify(sessionId)} would be stored under "${key}", which is the key ` +
          `of block "${other}" of session ${JSON.stringify(otherSession)}: the two would share one stored value. ` +
          "Use another session id, rename one of the blocks or give it a provider",
      );
    }
  }
}
