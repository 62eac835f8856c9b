/**
 * What a backend's write answers the write pipeline (store/provider.ts, store/step.ts, the registry and transfer
 * bases): an explicit record beside the caller's result, never marks on it. The pipeline publishes from the record
 * and hands the caller only the result, with its stored form.
 */

import type { SessionMessage } from "../contract/message.js";
import { parseMessage } from "../message/json.js";

/** The cursor of the change-log row a write committed with itself (SQLite's transaction, Postgres's statement). */
export interface Logged {
  /** Undefined when nothing was logged with the write: the feed then records the change itself. */
  logged?: number | undefined;
}

/** A write's record: the caller's result, the stored JSON its `message` is read from, and the logged cursor. */
export interface Written<R> extends Logged {
  /** The caller's result; its `message` is set here only when there is no `json` to read it from. */
  result: R;
  /** The message as a read returns it, as JSON (the first content when the id was stored already). */
  json?: string | undefined;
}

/** A row writer's record: also the `seq` of the row it wrote (none written: undefined), to key its payload links. */
export interface RowWritten<R, S = number> extends Written<R> {
  seq?: S | undefined;
}

/** A change-log cursor as a number, or undefined when the store logged nothing. */
export function cursorOf(cursor: number | null | undefined): number | undefined {
  return typeof cursor === "number" ? cursor : undefined;
}

/** A cursor as a change log answers it (null or undefined: nothing logged), for {@link Logged.logged}. */
export function loggedAt(cursor: number | null | undefined): Logged {
  return typeof cursor === "number" ? { logged: cursor } : {};
}

/**
 * The result the caller gets: `result` with its stored form parsed from `json` on first access, so a caller that
 * never looks at it pays nothing for it (a 50 MB message is not parsed again). This is the one place a result's
 * `message` is made from JSON.
 */
export function answer<R extends object>({ result, json }: Written<R>): R & { message?: SessionMessage } {
  if (json === undefined) return result;
  let parsed: SessionMessage | undefined;
  return Object.defineProperty({ ...result }, "message", {
    enumerable: true,
    configurable: true,
    get: () => {
      parsed ??= parseMessage(json) ?? undefined;
      return parsed;
    },
  });
}
