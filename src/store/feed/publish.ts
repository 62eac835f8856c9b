/**
 * What a committed write tells the change feed: one function per kind of write, called by the write pipeline
 * (store/provider.ts, store/step.ts) and by a registry delete or transfer import after the backend's write
 * returned. A write that logged its change itself (`logged`, from the write's record: SQLite and Postgres commit
 * every write's log row with the write itself) is not recorded again.
 */

import type { ChangeEvent } from "../../contract/feed.js";
import type { SessionMessage, StoredCompaction } from "../../contract/message.js";
import type { AppendResult, UpdateResult, UpsertResult } from "../../contract/provider.js";
import type { SessionImportResult } from "../../contract/transfer.js";
import type { ChangeFeed } from "./feed.js";

const LOCAL = { origin: "local" as const };

/** An event whose `message` is read from the write result only when a listener looks at it (it may be 50 MB). */
function withMessage<T extends object>(event: T, result: { message?: SessionMessage }): ChangeEvent {
  return Object.defineProperty(event, "message", {
    enumerable: true,
    get: () => result.message,
  }) as unknown as ChangeEvent;
}

/** An append (also of an id already stored: `inserted: false`). */
export function publishAppend(
  feed: ChangeFeed,
  sessionId: string,
  id: string,
  parentId: string | null | undefined,
  result: AppendResult,
  logged: number | undefined,
): Promise<void> {
  const { inserted } = result;
  const parent = parentId === undefined ? {} : { parentId };
  return feed.publish(
    { sessionId, type: "append", ids: [id], parentId, inserted },
    (cursor) => withMessage({ type: "append", sessionId, cursor, inserted, ...parent, ...LOCAL }, result),
    logged,
  );
}

/** An upsert: an insert is an append, a replacement that changed something an update, anything else nothing. */
export async function publishUpsert(
  feed: ChangeFeed,
  sessionId: string,
  id: string,
  parentId: string | null | undefined,
  result: UpsertResult,
  logged: number | undefined,
): Promise<void> {
  if (result.inserted) return publishAppend(feed, sessionId, id, parentId, result, logged);
  if (result.updated) return publishUpdate(feed, sessionId, id, result, logged);
}

/** An update that changed the stored content. */
export function publishUpdate(
  feed: ChangeFeed,
  sessionId: string,
  id: string,
  result: UpdateResult | UpsertResult,
  logged: number | undefined,
): Promise<void> {
  return feed.publish(
    { sessionId, type: "update", ids: [id] },
    (cursor) => withMessage({ type: "update", sessionId, cursor, ...LOCAL }, result),
    logged,
  );
}

/** An import that inserted. */
export function publishImport(
  feed: ChangeFeed,
  sessionId: string,
  id: string,
  parentId: string | null | undefined,
  result: AppendResult,
  logged: number | undefined,
): Promise<void> {
  return feed.publish(
    { sessionId, type: "import", ids: [id], parentId },
    (cursor) => withMessage({ type: "import", sessionId, cursor, inserted: true, ...LOCAL }, result),
    logged,
  );
}

/** A delete (`ids` as requested), with the cursor the delete logged itself, if any. */
export function publishDelete(
  feed: ChangeFeed,
  sessionId: string,
  ids: readonly string[],
  logged: number | undefined,
): Promise<void> {
  const copy = [...ids];
  return feed.publish(
    { sessionId, type: "delete", ids: copy },
    (cursor) => ({ type: "delete", sessionId, cursor, ids: copy, ...LOCAL }),
    logged,
  );
}

/**
 * A clear of the session (also a registry delete that removed something) or its erasure: no ids, so the log row
 * that announces an erasure holds none of the erased content.
 */
export function publishWhole(
  feed: ChangeFeed,
  type: "clear" | "erased",
  sessionId: string,
  logged: number | undefined,
): Promise<void> {
  return feed.publish(
    { sessionId, type, ids: [] },
    (cursor) => ({ type, sessionId, cursor, ...LOCAL }),
    logged,
  );
}

/** A stored overlay (as the backend answered it), with the cursor its write logged, if any. */
export function publishCompaction(
  feed: ChangeFeed,
  sessionId: string,
  compaction: StoredCompaction,
  logged: number | undefined,
): Promise<void> {
  return feed.publish(
    { sessionId, type: "compaction", ids: [], compaction },
    (cursor) => ({ type: "compaction", sessionId, cursor, compaction, ...LOCAL }),
    logged,
  );
}

/** True when an import inserted messages or overlays: only then is it published (one `reset`). */
export function importChanged(result: Pick<SessionImportResult, "messages" | "compactions">): boolean {
  return result.messages.inserted > 0 || result.compactions.inserted > 0;
}

/**
 * A whole-session transfer import that inserted something: one `reset` of the session (a bulk write: consumers
 * re-read it rather than receive every imported message); an import that inserted nothing publishes nothing.
 */
export async function publishImportReset(
  feed: ChangeFeed,
  result: SessionImportResult,
  logged: number | undefined,
): Promise<void> {
  if (!importChanged(result)) return;
  const { sessionId } = result;
  const reason = `session "${sessionId}" was imported`;
  await feed.publish(
    { sessionId, type: "reset", ids: [] },
    (cursor) => ({ type: "reset", reason, sessionId, cursor, ...LOCAL }),
    logged,
  );
}
