import { type Change, markLogged } from "../../store/feed/change-rows.js";
import type { SqlDriver } from "../connection/driver.js";
import type { SqliteChangeLog } from "./change-log.js";

/**
 * Runs a write and, when the store keeps a change log, the row `change` makes of its result in one transaction:
 * a process killed between them keeps both or neither, so no committed message goes unannounced. The result
 * carries the row's cursor (`markLogged`: the feed then publishes without recording again). A log row that
 * cannot be written rolls the write back with it.
 */
export function loggedWrite<T extends object>(
  driver: SqlDriver,
  log: SqliteChangeLog | undefined,
  sessionId: string,
  change: (result: T) => Change | null,
  write: () => T,
): T {
  if (!log) return write();
  return driver.transaction(() => {
    const result = write();
    const logged = change(result);
    return logged ? markLogged(result, log.record({ ...logged, sessionId })) : result;
  });
}
