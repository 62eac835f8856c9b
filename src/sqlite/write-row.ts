import type { SessionMessage } from "../contract/message.js";
import type { SqliteChangeLog } from "../sql/change-log/sqlite.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { collect, linkAttachments, unlinkRows } from "../sql/media/sqlite-tables.js";
import type { SealKey } from "../sql/sealing/sqlite.js";
import type { WriteGuard } from "../store/crypto/content-keys.js";
import { refusePayloadPointer } from "../store/crypto/seal.js";
import type { Change } from "../store/feed/change-rows.js";
import { type Offloaded, offloadMessage } from "../store/media/offload.js";
import type { RowWritten, Written } from "../store/written.js";
import type { ClearGuard } from "./append.js";

/**
 * Writes a message's row with what hangs on it, in one transaction when anything does:
 *
 * - the row: `row` gets the JSON to store (pointers in place of payloads, see media/) and answers with the `seq`
 *   of the row it wrote;
 * - the links of the message's payloads to that `seq` (`replaces`: an update, whose old links are released after
 *   the new ones are made, so a payload it keeps is never deleted in between);
 * - with a change log, the row `change` makes of the result: a process killed between them keeps both or neither,
 *   and a log row that cannot be written rolls the write back. The record carries the row's cursor (`logged`:
 *   the feed then publishes without recording again).
 *
 * With a keyring, the session owner's key is checked once, inside the write's transaction (so a rotation another
 * process started is seen) with the session's owner (so is a session deleted and created again for another owner),
 * and `row` gets it to seal with (null: in clear). With `guarded`, a check this store verified before is not read
 * again: `row` gets it as a guard its statement requires to be still recorded, and the session still the owner the
 * store cached; a session this store found in clear (ContentKeys.knownClear) is not looked up either: `row` gets the
 * owner it found as a clear guard its statement requires to be still so. `write.key`: the key (null: none) a write
 * of the same session looked up earlier in the caller's transaction, which holds the write lock: not read again.
 * Answers the write's result and logged cursor.
 */
export function writeMessageRow<T extends object>(
  driver: SqlDriver,
  log: SqliteChangeLog | undefined,
  sessionId: string,
  write: { message: SessionMessage; json: string; replaces: boolean; key?: Uint8Array | null | undefined },
  change: (result: T) => Change | null,
  row: (content: string, key: SealKey, guard?: WriteGuard, clear?: ClearGuard) => RowWritten<T>,
  guarded = false,
): Written<T> {
  const keys = driver.keys;
  if (!keys) return writeWith(driver, log, sessionId, write, change, row, null);
  // A session this store found in clear: no look-up, the row's statement requires it to be still so (append.ts),
  // unless payloads are offloaded (a refused guard seals the JSON the row got, which must be the whole message's).
  const clear = guarded ? keys.knownClear(sessionId) : undefined;
  if (clear) {
    const stored = offloadMessage(write.message, write.json);
    if (stored.attachments.length === 0) {
      const guardedRow = (c: string, k: SealKey) => row(c, k, undefined, clear);
      return writeWith(driver, log, sessionId, write, change, guardedRow, null, stored);
    }
  }
  return driver.transaction(() => {
    // A row writer whose statement checks a guard (append.ts) seals with a check this store verified, unread.
    const known = guarded ? keys.knownWriteKey(sessionId) : undefined;
    if (known) {
      refusePayloadPointer(sessionId, write.json);
      return writeWith(driver, log, sessionId, write, change, (c, k) => row(c, k, known.guard), known.key);
    }
    const key = write.key !== undefined ? write.key : keys.keyFor(sessionId);
    // An encrypted owner's payloads stay inline, sealed with the message: so no string may read as a pointer.
    if (key) refusePayloadPointer(sessionId, write.json);
    return writeWith(driver, log, sessionId, write, change, row, key);
  });
}

function writeWith<T extends object>(
  driver: SqlDriver,
  log: SqliteChangeLog | undefined,
  sessionId: string,
  write: { message: SessionMessage; json: string; replaces: boolean },
  change: (result: T) => Change | null,
  row: (content: string, key: SealKey) => RowWritten<T>,
  key: Uint8Array | null,
  offloaded?: Offloaded,
): Written<T> {
  // An encrypted owner's payloads stay inline, sealed with the message: payload rows are shared and in clear.
  const stored =
    offloaded ?? (key ? { content: write.json, attachments: [] } : offloadMessage(write.message, write.json));
  const { attachments } = stored;
  if (!log && attachments.length === 0 && !write.replaces) return row(stored.content, key);
  return driver.transaction(() => {
    const { seq, result } = row(stored.content, key);
    // Nothing written (an id already stored, identical content): the stored row keeps the links it has.
    if (seq !== undefined && (write.replaces || attachments.length > 0)) {
      const old = write.replaces ? unlinkRows(driver, "?", [seq]) : [];
      if (attachments.length > 0) linkAttachments(driver, seq, attachments);
      collect(driver, old);
    }
    const logged = log ? change(result) : null;
    return logged && log ? { result, logged: log.record({ ...logged, sessionId }) } : { result };
  });
}
