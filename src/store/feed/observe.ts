import type { SessionImportResult, SessionRegistry, SessionTransfer, TransferItem } from "../types.js";
import type { ChangeFeed } from "./feed.js";
import { publishClear } from "./publish.js";

/**
 * Makes a transfer's session import publish one `reset` of the session (a bulk write: consumers re-read it rather
 * than receive every imported message).
 */
export function observeTransfer<T extends SessionTransfer>(transfer: T, feed: ChangeFeed): T {
  const importSession = transfer.importSession;
  transfer.importSession = async function (items: AsyncIterable<TransferItem>): Promise<SessionImportResult> {
    const result = await importSession.call(this, items);
    if (result.messages.inserted > 0 || result.compactions.inserted > 0) {
      const reason = `session "${result.sessionId}" was imported`;
      await feed.publish({ sessionId: result.sessionId, type: "reset", ids: [] }, (cursor) => ({
        type: "reset",
        reason,
        sessionId: result.sessionId,
        cursor,
        origin: "local",
      }));
    }
    return result;
  };
  return transfer;
}

/** Makes a registry delete (SessionManager, CLI prune) publish a `clear` of the session. */
export function observeRegistry<R extends SessionRegistry>(registry: R, feed: ChangeFeed): R {
  const remove = registry.delete;
  registry.delete = async function (id, options) {
    const removed = await remove.call(this, id, options);
    await publishClear(feed, id);
    return removed;
  };
  return registry;
}
